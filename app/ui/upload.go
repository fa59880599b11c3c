package ui

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
)

// pathSubmitLimits announces the submit flow's limits before any upload
// (GET, public): {"maxSize": bytes}.
const pathSubmitLimits = "/api/submit/limits"

// The phases of one upload, and its three steps (the three calls).
type uploadPhase int

const (
	phaseIdle uploadPhase = iota
	phaseRunning
	phaseDone
	phaseFailed
	phaseCancelled
)

const (
	stepURL  = 1 // POST /api/submit/upload
	stepPut  = 2 // PUT the zip to the upload URL
	stepSign = 3 // POST /api/submit/sign
)

var stepNames = [...]string{stepURL: "Request an upload URL", stepPut: "Upload the zip", stepSign: "Publish"}

// UploadPanel uploads a zip by hand, as a pipeline would: the key file and
// the zip are dropped (together or one at a time) or picked with the
// keyboard, checked in the browser, then the three calls of the submit flow
// run with a step indicator and real upload progress.
//
// The key stays in this component's memory: it is never written to any
// browser storage and is gone when the page is left.
type UploadPanel struct {
	app.Compo

	ExtensionID   int64
	ExtensionName string
	// OnPublished is called on the UI goroutine with each bundle the panel
	// publishes.
	OnPublished func(api.Bundle)

	session *api.Session
	maxSize int64 // from the server; 0 until known

	key      *api.ServiceKey
	keyName  string
	zip      *jsFile
	checking int      // file checks in flight
	notices  []string // why the last files were refused, each with what to do

	dragging bool

	phase      uploadPhase
	step       int
	sent       int64
	total      int64
	samples    []progressSample
	putStart   time.Time
	putEnd     time.Time
	announced  int // the last progress quarter announced
	problem    *api.Problem
	bundle     *api.Bundle
	announce   string
	attempt    int
	cancel     context.CancelFunc
	stopListen func()
	// ctx is the component's own context, from OnMount. Work that outlives
	// an event uses it: the context an event handler gets belongs to the
	// element clicked, and when a re-render removes that element (the
	// retry button becomes the cancel button) it is cancelled and its
	// dispatches are dropped.
	ctx app.Context
}

type progressSample struct {
	at   time.Time
	sent int64
}

// OnMount loads who is signed in (the team's plan) and the size limit, and
// listens to drags, drops, clicks and keys on the drop zone.
func (p *UploadPanel) OnMount(ctx app.Context) {
	p.ctx = ctx
	currentSession(ctx, func(s *api.Session) { p.session = s })
	c := apiClient()
	ctx.Async(func() {
		var limits struct {
			MaxSize int64 `json:"maxSize"`
		}
		if err := c.Do(ctx, http.MethodGet, pathSubmitLimits, nil, &limits); err == nil {
			ctx.Dispatch(func(app.Context) { p.maxSize = limits.MaxSize })
		}
	})
	p.stopListen = p.listen(ctx)
}

// OnDismount aborts an upload in flight and stops listening. The key is
// dropped with the component.
func (p *UploadPanel) OnDismount() {
	if p.cancel != nil {
		p.cancel()
	}
	if p.stopListen != nil {
		p.stopListen()
		p.stopListen = nil
	}
	p.key, p.zip = nil, nil
}

// listen registers native listeners on the document. go-app runs its own
// handlers after the browser's event has returned, too late to call
// preventDefault on dragover and drop (the browser would open the dropped
// file) and too late to read a drop's files. These run synchronously and
// hand the rest to the UI goroutine. They sit on the document so that a
// file dropped next to the zone does not replace the page (and the key it
// holds), and so that they survive re-renders of the zone.
func (p *UploadPanel) listen(ctx app.Context) (stop func()) {
	doc := app.Window().Get("document")
	type listener struct {
		event string
		fn    app.Func
	}
	var listeners []listener
	add := func(event string, fn func(e app.Value)) {
		f := app.FuncOf(func(_ app.Value, args []app.Value) any {
			if len(args) > 0 {
				fn(args[0])
			}
			return nil
		})
		doc.Call("addEventListener", event, f)
		listeners = append(listeners, listener{event, f})
	}
	depth := 0 // dragenter minus dragleave inside the zone; only listeners touch it
	setDragging := func(on bool) {
		ctx.Dispatch(func(app.Context) { p.dragging = on })
	}
	add("dragenter", func(e app.Value) {
		if !carriesFiles(e) {
			return
		}
		e.Call("preventDefault")
		if inDropZone(e) {
			if depth++; depth == 1 {
				setDragging(true)
			}
		}
	})
	add("dragover", func(e app.Value) {
		if !carriesFiles(e) {
			return
		}
		e.Call("preventDefault")
		effect := "none"
		if inDropZone(e) {
			effect = "copy"
		}
		e.Get("dataTransfer").Set("dropEffect", effect)
	})
	add("dragleave", func(e app.Value) {
		if carriesFiles(e) && inDropZone(e) && depth > 0 {
			if depth--; depth == 0 {
				setDragging(false)
			}
		}
	})
	add("drop", func(e app.Value) {
		if !carriesFiles(e) {
			return
		}
		e.Call("preventDefault")
		if depth > 0 {
			depth = 0
			setDragging(false)
		}
		if !inDropZone(e) {
			return
		}
		files := filesOf(e.Get("dataTransfer").Get("files"))
		ctx.Dispatch(func(ctx app.Context) { p.takeFiles(ctx, files) })
	})
	openPicker := func() {
		if in := doc.Call("getElementById", "upload-files"); in.Truthy() {
			in.Call("click")
		}
	}
	add("click", func(e app.Value) {
		if inDropZone(e) {
			openPicker()
		}
	})
	add("keydown", func(e app.Value) {
		if e.Get("target").Get("id").String() != "drop-zone" {
			return
		}
		if k := e.Get("key").String(); k == "Enter" || k == " " {
			e.Call("preventDefault") // Space would scroll the page
			openPicker()
		}
	})
	add("change", func(e app.Value) {
		t := e.Get("target")
		if t.Get("id").String() != "upload-files" {
			return
		}
		files := filesOf(t.Get("files"))
		t.Set("value", "") // choosing the same file again fires change again
		ctx.Dispatch(func(ctx app.Context) { p.takeFiles(ctx, files) })
	})
	return func() {
		for _, l := range listeners {
			doc.Call("removeEventListener", l.event, l.fn)
			l.fn.Release()
		}
	}
}

// carriesFiles reports whether a drag event carries files (not text or a
// link dragged from the page).
func carriesFiles(e app.Value) bool {
	dt := e.Get("dataTransfer")
	if !dt.Truthy() {
		return false
	}
	types := dt.Get("types")
	for i := 0; i < types.Length(); i++ {
		if types.Index(i).String() == "Files" {
			return true
		}
	}
	return false
}

// inDropZone reports whether an event happened on the drop zone.
func inDropZone(e app.Value) bool {
	t := e.Get("target")
	if !t.Truthy() || t.Get("closest").Type() != app.TypeFunction {
		return false
	}
	return t.Call("closest", "#drop-zone").Truthy()
}

// checked is the outcome of the browser-side checks of dropped files.
type checked struct {
	key      *api.ServiceKey
	keyName  string
	zip      *jsFile
	problems []string
}

// takeFiles sorts dropped or picked files into the key file and the zip,
// checks them in the browser, and starts the upload once both are there.
func (p *UploadPanel) takeFiles(ctx app.Context, files []jsFile) {
	if len(files) == 0 {
		return
	}
	if p.phase == phaseRunning {
		p.say("An upload is running. Cancel it before choosing other files.")
		return
	}
	p.notices = nil
	var keys, zips []jsFile
	for _, f := range files {
		if isKeyFileName(f) {
			keys = append(keys, f)
		} else {
			zips = append(zips, f)
		}
	}
	var pre []string
	if len(zips) > 1 {
		pre = append(pre, fmt.Sprintf("%d zips were dropped (%s). Drop one zip at a time.", len(zips), fileNames(zips)))
		zips = nil
	}
	if len(keys) > 1 {
		pre = append(pre, fmt.Sprintf("%d key files were dropped (%s). Drop only this extension's key.json.", len(keys), fileNames(keys)))
		keys = nil
	}
	if len(zips)+len(keys) == 0 {
		p.refuse(pre)
		return
	}
	p.checking++
	limit, extID, extName := p.maxSize, p.ExtensionID, p.ExtensionName
	ctx.Async(func() {
		res := checked{problems: pre}
		if len(keys) == 1 {
			k, err := checkKeyFile(ctx, keys[0], extID, extName)
			if err != nil {
				res.problems = append(res.problems, err.Error())
			} else {
				res.key, res.keyName = k, keys[0].Name
			}
		}
		if len(zips) == 1 {
			if err := checkZip(ctx, zips[0], limit); err != nil {
				res.problems = append(res.problems, err.Error())
			} else {
				res.zip = &zips[0]
			}
		}
		ctx.Dispatch(func(ctx app.Context) { p.checked(ctx, res) })
	})
}

func (p *UploadPanel) checked(ctx app.Context, res checked) {
	p.checking--
	if res.key != nil {
		p.key, p.keyName = res.key, res.keyName
	}
	if res.zip != nil {
		p.zip = res.zip
		if p.phase != phaseRunning {
			p.phase, p.problem, p.bundle = phaseIdle, nil, nil
		}
	}
	if len(res.problems) > 0 {
		p.refuse(res.problems)
		return
	}
	switch {
	case p.key != nil && p.zip != nil && p.checking == 0 && p.phase != phaseRunning:
		p.start(ctx)
	case p.zip != nil && p.key == nil:
		p.say(p.zip.Name + " is ready. Now drop this extension's key file (key.json), or get one on the settings page.")
	case p.key != nil && p.zip == nil:
		p.say("The key for " + p.ExtensionName + " is loaded. Now drop the extension's zip.")
	}
}

func (p *UploadPanel) refuse(problems []string) {
	p.notices = problems
	p.say(strings.Join(problems, " "))
}

func isKeyFileName(f jsFile) bool {
	return strings.HasSuffix(strings.ToLower(f.Name), ".json") || f.Type == "application/json"
}

func fileNames(files []jsFile) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// checkKeyFile reads and parses a key file and refuses another
// extension's key. Every error says what to do.
func checkKeyFile(ctx context.Context, f jsFile, extID int64, extName string) (*api.ServiceKey, error) {
	settings := "Download this extension's key file on its settings page."
	if f.Size > api.MaxKeyFileSize {
		return nil, fmt.Errorf("%s is too large to be a key file. %s", f.Name, settings)
	}
	text, err := readText(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s could not be read (%v). Drop it again.", f.Name, err)
	}
	key, _, err := api.ParseKeyFile([]byte(text)) // the bare service object is taken too
	if err != nil {
		return nil, fmt.Errorf("%s is %v", f.Name, err)
	}
	if key.ExtensionID != strconv.FormatInt(extID, 10) {
		return nil, fmt.Errorf("%s is the key of extension #%s, not of %s (#%d). %s", f.Name, key.ExtensionID, extName, extID, settings)
	}
	return &key, nil
}

// checkZip checks what can be checked before any request: not empty,
// within the announced limit, starting with a zip signature (4 bytes are
// read; the rest stays in the browser).
func checkZip(ctx context.Context, f jsFile, limit int64) error {
	if f.Size == 0 {
		return fmt.Errorf("%s is empty. Drop the extension's .zip file.", f.Name)
	}
	if limit > 0 && f.Size > limit {
		return fmt.Errorf("%s is %s; Betaport takes zips up to %s. Make the bundle smaller (leave out files the extension does not need), then drop it again.",
			f.Name, humanSize(f.Size), humanSize(limit))
	}
	head, err := readHead(ctx, f, api.ZipHeadSize)
	if err != nil {
		return fmt.Errorf("%s could not be read (%v). Drop it again.", f.Name, err)
	}
	if api.IsZipStart(head) {
		return nil
	}
	return fmt.Errorf("%s is not a zip file (it does not start with a zip signature). Zip the extension's folder and drop the .zip file.", f.Name)
}

// start runs the three calls for the current zip and key. ctx must be the
// component's (see UploadPanel.ctx).
func (p *UploadPanel) start(ctx app.Context) {
	if p.key == nil || p.zip == nil || p.phase == phaseRunning {
		return
	}
	p.attempt++
	gen, key, zip := p.attempt, *p.key, *p.zip
	runCtx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	p.phase, p.step, p.problem, p.bundle, p.notices = phaseRunning, stepURL, nil, nil, nil
	p.sent, p.total, p.samples, p.announced = 0, zip.Size, nil, 0
	p.say("Step 1 of 3: requesting an upload URL.")
	p.focus(ctx, "upload-cancel")

	// update runs f on the UI goroutine unless a newer attempt started.
	update := func(f func(ctx app.Context)) {
		ctx.Dispatch(func(ctx app.Context) {
			if p.attempt == gen {
				f(ctx)
			}
		})
	}
	// stopped reports a failure, or the cancel that caused it. Read in the
	// goroutine: the deferred cancel below ends runCtx in every case.
	stopped := func(err error) {
		byCancel := runCtx.Err() != nil
		update(func(ctx app.Context) {
			if byCancel {
				p.cancelled(ctx)
			} else {
				p.failed(ctx, err)
			}
		})
	}
	c := apiClient()
	ctx.Async(func() {
		defer cancel()
		var up api.UploadURL
		if err := c.Do(runCtx, http.MethodPost, api.PathSubmitUpload, key, &up); err != nil {
			stopped(err)
			return
		}
		update(func(app.Context) {
			p.step = stepPut
			p.putStart, p.putEnd = time.Now(), time.Time{}
			p.samples = []progressSample{{at: p.putStart}}
			p.say("Step 2 of 3: uploading " + zip.Name + ".")
		})
		err := putFile(runCtx, up.URL, zip, func(sent, total int64) {
			update(func(app.Context) { p.progress(sent, total) })
		})
		if err != nil {
			stopped(err)
			return
		}
		update(func(ctx app.Context) {
			p.step, p.cancel = stepSign, nil // publishing cannot be called back
			p.progress(zip.Size, zip.Size)
			p.putEnd = time.Now()
			p.say("Step 3 of 3: publishing.")
			p.focus(ctx, "upload-steps")
		})
		var b api.Bundle
		if err := c.Do(context.WithoutCancel(runCtx), http.MethodPost, api.PathSubmitSign, key, &b); err != nil {
			update(func(ctx app.Context) { p.failed(ctx, err) })
			return
		}
		update(func(ctx app.Context) { p.published(ctx, b) })
	})
}

func (p *UploadPanel) progress(sent, total int64) {
	now := time.Now()
	p.sent, p.total = sent, total
	p.samples = append(p.samples, progressSample{now, sent})
	// Speed over the last three seconds.
	for len(p.samples) > 2 && now.Sub(p.samples[0].at) > 3*time.Second {
		p.samples = p.samples[1:]
	}
	if q := quarter(sent, total); q > p.announced && q < 4 {
		p.announced = q
		p.say(fmt.Sprintf("Uploading: %d%%.", q*25))
	}
}

func quarter(sent, total int64) int {
	if total <= 0 {
		return 0
	}
	return int(sent * 4 / total)
}

// speed is bytes per second over the recent samples, or over the whole
// transfer once it is over; 0 while unknown.
func (p *UploadPanel) speed() float64 {
	if !p.putEnd.IsZero() {
		if d := p.putEnd.Sub(p.putStart).Seconds(); d > 0 {
			return float64(p.total) / d
		}
		return 0
	}
	if len(p.samples) < 2 {
		return 0
	}
	first, last := p.samples[0], p.samples[len(p.samples)-1]
	dt := last.at.Sub(first.at).Seconds()
	if dt < 0.2 {
		return 0
	}
	return float64(last.sent-first.sent) / dt
}

func (p *UploadPanel) published(ctx app.Context, b api.Bundle) {
	p.phase, p.bundle, p.cancel, p.zip = phaseDone, &b, nil, nil
	p.say(fmt.Sprintf("Published bundle #%d, version %s. Testers get it now.", b.Number, versionText(b)))
	p.focus(ctx, "upload-result")
	if p.OnPublished != nil {
		p.OnPublished(b)
	}
}

func (p *UploadPanel) failed(ctx app.Context, err error) {
	p.phase, p.cancel = phaseFailed, nil
	prob, ok := api.AsProblem(err)
	if !ok {
		prob = &api.Problem{Title: "The service cannot be reached", Detail: problemText(err)}
	}
	p.problem = prob
	switch prob.Type {
	case api.ProblemInvalidKey:
		// This key will not work again: ask for the new one, which starts
		// the upload again by itself.
		p.key, p.keyName = nil, ""
	case api.ProblemInvalidZip, api.ProblemNotAZip, api.ProblemTooLarge:
		// The same zip would fail again: ask for a fixed one.
		p.zip = nil
	}
	msg := fmt.Sprintf("Step %d of 3 failed: %s", p.step, prob.Error())
	if n := len(prob.Problems); n > 0 {
		msg += fmt.Sprintf(" %d problem(s) are listed below.", n)
	}
	p.say(msg)
	if p.canRetry() {
		p.focus(ctx, "upload-retry")
	} else {
		p.focus(ctx, "drop-zone")
	}
}

func (p *UploadPanel) cancelled(ctx app.Context) {
	p.phase, p.cancel = phaseCancelled, nil
	p.say("Upload cancelled. Nothing was published.")
	p.focus(ctx, "upload-retry")
}

func (p *UploadPanel) canRetry() bool {
	return p.key != nil && p.zip != nil && p.phase != phaseRunning
}

func (p *UploadPanel) cancelUpload(ctx app.Context, e app.Event) {
	if p.cancel != nil && p.step < stepSign {
		p.cancel()
	}
}

func (p *UploadPanel) retry(ctx app.Context, e app.Event) {
	p.start(p.ctx)
}

// say puts text in the aria-live region.
func (p *UploadPanel) say(text string) { p.announce = text }

// focus moves the focus to the element with id once it is rendered.
func (p *UploadPanel) focus(ctx app.Context, id string) { focusByID(ctx, id) }

func (p *UploadPanel) Render() app.UI {
	settings := fmt.Sprintf("/extensions/%d/settings", p.ExtensionID)
	s := p.session
	section := app.Section().ID("upload-panel").Class("upload")
	live := app.P().ID("upload-status").Class("visually-hidden").
		Attr("role", "status").Aria("live", "polite").Aria("atomic", "true").Text(p.announce)
	switch {
	case s != nil && s.Kind != api.KindAdmin:
		return section.Hidden(true).Body(live)
	case s != nil && s.Team != nil && s.Team.Plan != api.PlanProfessional:
		return section.Body(
			app.H2().Text("Upload a bundle"),
			app.P().ID("upload-plan").Class("state").Body(
				app.Text(fmt.Sprintf("Manual upload needs the Professional plan; %s is on the %s plan. ", s.Team.Name, planName(s.Team.Plan))),
				app.Text("Ask for an upgrade, then upload here or from a pipeline."),
			),
			live,
		)
	}
	busy := p.phase == phaseRunning
	zoneClass := "drop-zone"
	if p.dragging {
		zoneClass += " dragging"
	}
	// Compact while idle: the bundles list below is the page's main content.
	return section.Body(
		app.Div().Class("upload-head").Body(
			app.H2().Text("Upload a bundle"),
			app.P().Class("muted").Body(
				app.Text("The same three calls as a pipeline, with the key file from the "),
				app.A().ID("settings-link").Href(settings).Text("settings page"),
				app.Text(" (kept in this page's memory only)."),
			),
		),
		app.Div().ID("drop-zone").Class(zoneClass).
			Attr("role", "button").TabIndex(0).
			Aria("describedby", "drop-zone-hint").Aria("disabled", busy || app.IsServer).Body(
			app.Strong().Text("Drop the .zip and key.json here"),
			app.Span().ID("drop-zone-hint").Class("muted").Text(", together or one at a time, or press Enter or Space to choose them"),
		),
		app.Input().ID("upload-files").Type("file").Multiple(true).Hidden(true).TabIndex(-1).
			Accept(".zip,.json,application/zip,application/json"),
		app.If(p.zip != nil || p.key != nil || p.phase != phaseIdle, p.renderChosen()),
		app.If(len(p.notices) > 0, app.Ul().ID("upload-notices").Class("state state-error").Body(
			app.Range(p.notices).Slice(func(i int) app.UI { return app.Li().Text(p.notices[i]) }),
		)),
		app.If(p.phase != phaseIdle, p.renderRun()),
		live,
	)
}

func (p *UploadPanel) renderChosen() app.UI {
	zip := app.Dd().ID("upload-zip").Class("muted").Text("None yet")
	if p.zip != nil {
		zip = app.Dd().ID("upload-zip").Text(fmt.Sprintf("%s (%s)", p.zip.Name, humanSize(p.zip.Size)))
	}
	key := app.Dd().ID("upload-key").Class("muted").Text("None yet: download it on the settings page")
	if p.key != nil {
		key = app.Dd().ID("upload-key").Text(fmt.Sprintf("%s: key of %s (#%s)", p.keyName, p.ExtensionName, p.key.ExtensionID))
	}
	return app.Dl().Class("facts upload-chosen").Body(
		app.Dt().Text("Zip"), zip,
		app.Dt().Text("Key file"), key,
	)
}

func (p *UploadPanel) renderRun() app.UI {
	return app.Div().Class("upload-run").Body(
		app.Ol().ID("upload-steps").Class("steps").TabIndex(-1).Aria("label", "Upload steps").Body(
			app.Range(stepNames[1:]).Slice(func(i int) app.UI {
				n := i + 1
				state := p.stepState(n)
				li := app.Li().DataSet("step", n).DataSet("state", state).Class("step step-"+state).Body(
					app.Span().Class("step-name").Text(stepNames[n]),
					app.Span().Class("visually-hidden").Text(" ("+state+")"),
				)
				if state == "active" {
					li = li.Aria("current", "step")
				}
				return li
			}),
		),
		app.If(p.step >= stepPut, p.renderProgress()),
		app.Div().Class("upload-actions").Body(
			app.If(p.phase == phaseRunning && p.step < stepSign,
				button().ID("upload-cancel").Type("button").Text("Cancel upload").OnClick(p.cancelUpload)),
			app.If((p.phase == phaseFailed || p.phase == phaseCancelled) && p.canRetry(),
				button().ID("upload-retry").Type("button").Class("primary").
					Aria("describedby", "upload-outcome").Text("Try again").OnClick(p.retry)),
		),
		p.renderOutcome(),
	)
}

func (p *UploadPanel) stepState(n int) string {
	switch {
	case n < p.step || p.phase == phaseDone:
		return "done"
	case n > p.step:
		return "pending"
	case p.phase == phaseFailed:
		return "failed"
	case p.phase == phaseCancelled:
		return "cancelled"
	default:
		return "active"
	}
}

func (p *UploadPanel) renderProgress() app.UI {
	pct := 0
	if p.total > 0 {
		pct = int(p.sent * 100 / p.total)
	}
	speed, left := "measuring…", "estimating…"
	if v := p.speed(); v > 0 {
		speed = humanSize(int64(v)) + "/s"
		left = durationText(time.Duration(float64(p.total-p.sent) / v * float64(time.Second)))
	}
	if p.sent >= p.total {
		left = "none"
	}
	return app.Div().ID("upload-progress-box").Class("progress").Body(
		app.Label().ID("upload-progress-label").For("upload-progress").Text("Upload progress"),
		app.Progress().ID("upload-progress").Max(p.total).Value(p.sent).Aria("describedby", "upload-bytes"),
		app.P().Class("progress-facts").Body(
			app.Strong().ID("upload-percent").Text(strconv.Itoa(pct)+"%"),
			app.Span().ID("upload-bytes").Text(humanSize(p.sent)+" of "+humanSize(p.total)),
			app.Span().ID("upload-speed").Text(speed),
			app.Span().ID("upload-eta").Text("time left: "+left),
		),
	)
}

func (p *UploadPanel) renderOutcome() app.UI {
	switch {
	case p.phase == phaseDone && p.bundle != nil:
		b := p.bundle
		return app.Div().ID("upload-result").Class("state state-ok").TabIndex(-1).Body(
			app.P().Body(
				app.Strong().ID("upload-result-title").Text(fmt.Sprintf("Published bundle #%d, version %s.", b.Number, versionText(*b))),
				app.Text(" It is the current bundle: testers get it now. Drop another zip to publish again."),
			),
		)
	case p.phase == phaseCancelled:
		return app.P().ID("upload-outcome").Class("state").Text("Upload cancelled. Nothing was published; the next try starts from the beginning.")
	case p.phase == phaseFailed && p.problem != nil:
		pr := p.problem
		var next string
		switch {
		case p.key == nil:
			next = "Drop the new key file to try again; the upload starts by itself."
		case p.zip == nil:
			next = "Fix the zip, then drop it here; the upload starts by itself."
		}
		return app.Div().ID("upload-outcome").Class("state state-error").Body(
			app.P().Body(
				app.Strong().ID("upload-error-title").Text(problemTitle(pr)+". "),
				app.Span().ID("upload-error").Text(pr.Detail),
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

func problemTitle(p *api.Problem) string {
	switch {
	case p.Title != "" && p.Status > 0:
		return fmt.Sprintf("%s (%d)", p.Title, p.Status)
	case p.Title != "":
		return p.Title
	default:
		return "Upload failed"
	}
}

func planName(plan string) string {
	switch plan {
	case api.PlanProfessional:
		return "Professional"
	case api.PlanStarter:
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
