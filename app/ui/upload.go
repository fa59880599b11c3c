package ui

import (
	"fmt"
	"strconv"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/upload"
)

// UploadPanel uploads a zip by hand, as a pipeline would: the key file and
// the zip are dropped (together or one at a time) or picked with the
// keyboard, checked in the browser, then the three calls of the submit flow
// run with a step indicator and real upload progress. The work is an
// upload.Runner's (plain Go, tested natively); the drop zone's listeners
// are in dropzone.go, the browser's file and PUT in xhr.go.
//
// The key stays in the runner's memory: it is never written to any browser
// storage and is gone when the page is left.
type UploadPanel struct {
	app.Compo

	ExtensionID   int64
	ExtensionName string
	// OnPublished is called on the UI goroutine with each bundle the panel
	// publishes.
	OnPublished func(b betaport.Bundle, current bool)
	// Channels are the extension's channels, by name: the bundle goes to
	// the one picked (the default one until they are read).
	Channels []string

	session    *api.Session
	run        *upload.Runner
	dragging   bool
	stopListen func()
}

// focusIDs are the elements the runner's focus moves go to.
var focusIDs = map[upload.Focus]string{
	upload.FocusCancel:   "upload-cancel",
	upload.FocusSteps:    "upload-steps",
	upload.FocusResult:   "upload-result",
	upload.FocusRetry:    "upload-retry",
	upload.FocusDropZone: "drop-zone",
	upload.FocusNotes:    "release-notes",
}

// OnMount loads who is signed in (the team's plan) and the size limit, and
// listens to drags, drops, clicks and keys on the drop zone.
//
// The runner works under the component's own context, from here: the
// context an event handler gets belongs to the element clicked, and when a
// re-render removes that element (the retry button becomes the cancel
// button) it is cancelled and its dispatches are dropped.
func (p *UploadPanel) OnMount(ctx app.Context) {
	currentSession(ctx, func(s *api.Session) { p.session = s })
	p.run = upload.New(upload.Config{
		Client:    apiClient(),
		Context:   ctx,
		Dispatch:  func(f func()) { ctx.Dispatch(func(app.Context) { f() }) },
		Async:     ctx.Async,
		Extension: func() (int64, string) { return p.ExtensionID, p.ExtensionName },
		// An admin's session authorises the calls: the zip alone is enough.
		SignedIn: func() bool { return p.session != nil && p.session.Kind == api.KindAdmin },
		Focus: func(f upload.Focus) {
			focusByID(ctx, focusIDs[f])
			if f == upload.FocusRetry || f == upload.FocusDropZone {
				// A failure: its box, under the panel's controls, is
				// brought into view too (it is announced already).
				ctx.Defer(func(app.Context) {
					if el := app.Window().GetElementByID("upload-outcome"); el.Truthy() {
						el.Call("scrollIntoView", map[string]any{"block": "nearest"})
					}
				})
			}
		},
		Published: func(b betaport.Bundle) {
			// The notes went with this bundle (the runner cleared them):
			// the box starts empty for the next one.
			if el := app.Window().GetElementByID("release-notes"); el != nil && el.Truthy() {
				el.Set("value", "")
			}
			if p.OnPublished != nil {
				p.OnPublished(b, p.run.ReachedDefault())
			}
		},
		Size:      humanSize,
		Version:   versionText,
		ErrorText: problemText,
	})
	p.run.LoadLimits()
	p.stopListen = listenDropZone(ctx, func(on bool) { p.dragging = on }, p.run.Take)
}

// OnDismount aborts an upload in flight and stops listening. The key is
// dropped with the runner.
func (p *UploadPanel) OnDismount() {
	if p.run != nil {
		p.run.Close()
	}
	if p.stopListen != nil {
		p.stopListen()
		p.stopListen = nil
	}
}

func (p *UploadPanel) cancelUpload(ctx app.Context, e app.Event) { p.run.Cancel() }

func (p *UploadPanel) retry(ctx app.Context, e app.Event) { p.run.Start() }

// notesInput follows the release notes as they are typed: the byte counter
// and the message over the limit re-render with them.
func (p *UploadPanel) notesInput(ctx app.Context, e app.Event) {
	if p.run != nil {
		p.run.SetNotes(ctx.JSSrc().Get("value").String())
	}
}

// state is the runner's, or an idle one before it exists (on the server).
func (p *UploadPanel) state() *upload.Runner {
	if p.run == nil {
		return &upload.Runner{}
	}
	return p.run
}

func (p *UploadPanel) Render() app.UI {
	r := p.state()
	settings := fmt.Sprintf("/extensions/%d/settings", p.ExtensionID)
	s := p.session
	section := app.Section().ID("upload-panel").Class("upload")
	live := app.P().ID("upload-status").Class("visually-hidden").
		Attr("role", "status").Aria("live", "polite").Aria("atomic", "true").Text(r.Announce)
	switch {
	case s != nil && s.Kind != api.KindAdmin:
		return section.Hidden(true).Body(live)
	case s != nil && s.Team != nil && s.Team.Plan != betaport.PlanProfessional:
		return section.Body(
			app.H2().Text("Upload a bundle"),
			app.P().ID("upload-plan").Class("state").Body(
				app.Text(fmt.Sprintf("Manual upload needs the Professional plan; %s is on the %s plan. ", s.Team.Name, planName(s.Team.Plan))),
				app.Text("Ask for an upgrade, then upload here or from a pipeline."),
			),
			live,
		)
	}
	busy := r.Phase == upload.Running
	zoneClass := "drop-zone"
	if p.dragging {
		zoneClass += " dragging"
	}
	// Compact while idle: the bundles list below is the page's main content.
	return section.Body(
		app.Div().Class("upload-head").Body(
			app.H2().Text("Upload a bundle"),
			app.P().Class("muted").Body(
				app.Text("The same three calls as a pipeline, signed in as you. Pipelines use a key file from the "),
				app.A().ID("settings-link").Href(settings).Text("settings page"),
				app.Text("; one dropped here is used instead (kept in this page's memory only)."),
			),
		),
		p.renderNotes(r, busy),
		app.Div().ID("drop-zone").Class(zoneClass).
			Attr("role", "button").TabIndex(0).
			Aria("describedby", "drop-zone-hint").Aria("disabled", busy || app.IsServer).Body(
			app.Strong().Text("Drop the extension's .zip here"),
			app.Span().ID("drop-zone-hint").Class("muted").Text(", or press Enter or Space to choose it"),
		),
		app.Input().ID("upload-files").Type("file").Multiple(true).Hidden(true).TabIndex(-1).
			Accept(".zip,.json,application/zip,application/json"),
		app.If(r.Zip != nil || r.Key != nil || r.Phase != upload.Idle, p.renderChosen(r)),
		app.If(len(r.Notices) > 0, app.Ul().ID("upload-notices").Class("state state-error").Body(
			app.Range(r.Notices).Slice(func(i int) app.UI { return app.Li().Text(r.Notices[i]) }),
		)),
		// Files are ready but the notes kept them from going.
		p.renderStart(r),
		app.If(r.Phase != upload.Idle, p.renderRun(r)),
		live,
	)
}

// renderStart is the Upload button of files that wait: the notes kept them
// from going (app.If would build its content even when hidden).
func (p *UploadPanel) renderStart(r *upload.Runner) app.UI {
	if r.Phase != upload.Idle || !r.CanRetry() {
		return app.Text("")
	}
	return app.Div().Class("upload-actions").Body(
		button().ID("upload-start").Type("button").Class("primary").Text("Upload " + r.Zip.Name()).OnClick(p.retry),
	)
}

// renderChannel is where the next bundle goes: a channel, and the share of
// its testers a staged rollout starts at (empty: all of them at once).
//
// With one channel there is nothing to choose: the panel stays as short as
// before channels, and the bundle goes to everyone on it.
func (p *UploadPanel) renderChannel(r *upload.Runner, busy bool) app.UI {
	names := p.Channels
	if len(names) < 2 {
		return app.Text("")
	}
	picked := r.Channel
	if picked == "" {
		picked = betaport.DefaultChannel
	}
	options := make([]app.UI, len(names))
	for i, n := range names {
		options[i] = app.Option().Value(n).Selected(n == picked).Text(n)
	}
	return app.Div().ID("upload-target").Class("upload-target").Body(
		app.Label().For("upload-channel").Text("Publish to"),
		app.Select().ID("upload-channel").Disabled(busy).OnChange(func(ctx app.Context, e app.Event) {
			if p.run != nil {
				p.run.Channel = ctx.JSSrc().Get("value").String()
			}
		}).Body(options...),
		app.Label().For("upload-rollout").Text("for (% of its testers)"),
		typedValue(app.Input().ID("upload-rollout").Type("text").Attr("inputmode", "numeric").Placeholder("all").ReadOnly(busy),
			r.Rollout).OnInput(func(ctx app.Context, e app.Event) {
			if p.run != nil {
				p.run.Rollout = ctx.JSSrc().Get("value").String()
			}
		}),
	)
}

// renderNotes is the release notes box: a labelled textarea, the syntax in
// a hint, the message over the limit above it (a live region, empty while
// the notes fit) and a byte counter below it. Its value is the browser's:
// the runner follows it, and only a publish empties it.
func (p *UploadPanel) renderNotes(r *upload.Runner, busy bool) app.UI {
	n := len(r.Notes)
	problem := r.NotesProblem()
	count := app.P().ID("release-notes-count").Class("notes-count muted")
	if n > betaport.MaxReleaseNotes {
		count = app.P().ID("release-notes-count").Class("notes-count notes-over")
	}
	return app.Div().ID("release-notes-box").Class("notes-field").Body(
		app.Label().For("release-notes").Body(
			app.Text("Release notes"), app.Span().Class("muted").Text(" (optional)"),
		),
		app.P().ID("release-notes-hint").Class("muted notes-hint").Text(
			"Shown to testers with the next bundle. A blank line starts a paragraph; lines starting “- ” or “1. ” make a list; [text](https://…) makes a link."),
		app.P().ID("release-notes-error").Class("notes-error").Aria("live", "polite").Text(problem),
		app.Textarea().ID("release-notes").Rows(2).Attr("spellcheck", "true").ReadOnly(busy).
			Aria("describedby", "release-notes-error release-notes-hint release-notes-count").
			Aria("invalid", problem != "").OnInput(p.notesInput),
		// Where the bundle goes shares the counter's line: the panel is
		// no taller with channels than without.
		app.Div().Class("notes-foot").Body(
			p.renderChannel(r, busy),
			count.Text(fmt.Sprintf("%s of %s bytes (10 KiB)", groupDigits(n), groupDigits(betaport.MaxReleaseNotes))),
		),
	)
}

// groupDigits writes n with thousands separated: 10,240.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func (p *UploadPanel) renderChosen(r *upload.Runner) app.UI {
	zip := app.Dd().ID("upload-zip").Class("muted").Text("None yet")
	switch {
	case r.Zip != nil:
		zip = app.Dd().ID("upload-zip").Text(fmt.Sprintf("%s (%s)", r.Zip.Name(), humanSize(r.Zip.Size())))
	case r.Phase == upload.Done && r.SentZip != nil && r.Bundle != nil:
		// Published: the panel says which zip became the bundle beside it.
		zip = app.Dd().ID("upload-zip").Text(fmt.Sprintf("%s (%s), published as bundle #%d: drop the next zip", r.SentZip.Name(), humanSize(r.SentZip.Size()), r.Bundle.Number))
	case r.Phase == upload.Failed && r.SentZip != nil:
		// Refused: still named, so the error below is known to be its.
		zip = app.Dd().ID("upload-zip").Text(fmt.Sprintf("%s (%s), not published: drop a fixed zip", r.SentZip.Name(), humanSize(r.SentZip.Size())))
	}
	key := app.Dd().ID("upload-key").Class("muted").Text("None: you are signed in")
	if p.session == nil || p.session.Kind != api.KindAdmin {
		key = app.Dd().ID("upload-key").Class("muted").Text("None yet: create one on the settings page")
	}
	if r.Key != nil {
		key = app.Dd().ID("upload-key").Text(fmt.Sprintf("%s: key of %s (#%s)", r.KeyName, p.ExtensionName, r.Key.ExtensionID))
	}
	return app.Dl().Class("facts upload-chosen").Body(
		app.Dt().Text("Zip"), zip,
		app.Dt().Text("Key file"), key,
	)
}

func (p *UploadPanel) renderRun(r *upload.Runner) app.UI {
	return app.Div().Class("upload-run").Body(
		app.Ol().ID("upload-steps").Class("steps").TabIndex(-1).Aria("label", "Upload steps").Body(
			app.Range(upload.StepNames[1:]).Slice(func(i int) app.UI {
				n := i + 1
				state := r.StepState(client.Step(n))
				li := app.Li().DataSet("step", n).DataSet("state", state).Class("step step-"+state).Body(
					app.Span().Class("step-name").Text(upload.StepNames[n]),
					app.Span().Class("visually-hidden").Text(" ("+state+")"),
				)
				if state == "active" {
					li = li.Aria("current", "step")
				}
				return li
			}),
		),
		app.If(r.Step >= client.StepPut, p.renderProgress(r)),
		app.Div().Class("upload-actions").Body(
			app.If(r.CanCancel(),
				button().ID("upload-cancel").Type("button").Text("Cancel upload").OnClick(p.cancelUpload)),
			app.If((r.Phase == upload.Failed || r.Phase == upload.Cancelled) && r.CanRetry(),
				button().ID("upload-retry").Type("button").Class("primary").
					Aria("describedby", "upload-outcome").Text("Try again").OnClick(p.retry)),
		),
		p.renderOutcome(r),
	)
}

func (p *UploadPanel) renderProgress(r *upload.Runner) app.UI {
	pct := 0
	if r.Total > 0 {
		pct = int(r.Sent * 100 / r.Total)
	}
	speed, left := "measuring…", "estimating…"
	if v := r.Speed(); v > 0 {
		speed = humanSize(int64(v)) + "/s"
		left = durationText(time.Duration(float64(r.Total-r.Sent) / v * float64(time.Second)))
	}
	if r.Sent >= r.Total {
		left = "none"
	}
	return app.Div().ID("upload-progress-box").Class("progress").Body(
		app.Label().ID("upload-progress-label").For("upload-progress").Text("Upload progress"),
		app.Progress().ID("upload-progress").Max(r.Total).Value(r.Sent).Aria("describedby", "upload-bytes"),
		app.P().Class("progress-facts").Body(
			app.Strong().ID("upload-percent").Text(strconv.Itoa(pct)+"%"),
			app.Span().ID("upload-bytes").Text(humanSize(r.Sent)+" of "+humanSize(r.Total)),
			app.Span().ID("upload-speed").Text(speed),
			app.Span().ID("upload-eta").Text("time left: "+left),
		),
	)
}

func (p *UploadPanel) renderOutcome(r *upload.Runner) app.UI {
	switch {
	case r.Phase == upload.Done && r.Bundle != nil:
		b := r.Bundle
		return app.Div().ID("upload-result").Class("state state-ok").TabIndex(-1).Body(
			app.P().Body(
				app.Strong().ID("upload-result-title").Text(fmt.Sprintf("Published bundle #%d, version %s.", b.Number, versionText(*b))),
				app.Text(" It is the current bundle: testers get it now. Drop another zip to publish again."),
			),
			app.If(len(r.Warnings) > 0, app.Ul().ID("upload-warnings").Class("upload-warnings").Body(
				app.Range(r.Warnings).Slice(func(i int) app.UI {
					return app.Li().Body(app.Strong().Text("Warning: "), app.Text(r.Warnings[i]))
				}),
			)),
		)
	case r.Phase == upload.Cancelled:
		return app.P().ID("upload-outcome").Class("state").Text("Upload cancelled. Nothing was published; the next try starts from the beginning.")
	case r.Phase == upload.Failed && r.Problem != nil:
		pr := r.Problem
		var next string
		switch {
		case pr.Type == api.ProblemInvalidKey && r.CanRetry():
			next = "The key file was set aside: Try again publishes signed in as you, or drop a current key file."
		case pr.Type == api.ProblemInvalidKey:
			next = "Drop a current key file to try again; the upload starts by itself."
		case r.Zip == nil:
			next = "Fix the zip, then drop it here; the upload starts by itself."
		}
		return app.Div().ID("upload-outcome").Class("state state-error").Body(
			app.P().Body(
				app.Strong().ID("upload-error-title").Text(r.FailureTitle()+" "),
				app.Span().ID("upload-error").Text(r.FailureDetail()),
			),
			app.If(len(pr.Problems) > 0, app.Ul().ID("upload-problems").Body(
				app.Range(pr.Problems).Slice(func(i int) app.UI {
					zp := pr.Problems[i]
					path := zp.Path
					if path == "" {
						path = "(the whole zip)"
					}
					return app.Li().DataSet("code", zp.Code).Body(
						app.Code().Class("problem-path").Text(path),
						app.Text(": "+zp.Message),
					)
				}),
			)),
			app.If(next != "", app.P().Text(next)),
		)
	}
	return app.Text("")
}

func planName(plan string) string {
	switch plan {
	case betaport.PlanProfessional:
		return "Professional"
	case betaport.PlanStarter:
		return "Starter"
	}
	return plan
}

func durationText(d time.Duration) string {
	switch {
	case d < time.Second:
		return "under a second"
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()+0.5))
	default:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
}
