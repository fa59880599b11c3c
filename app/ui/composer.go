package ui

// A tester's report form on their builds page (model.Composer) and their
// own reports (model.MyReports): screenshots come pasted (into the form),
// dropped (on its drop area) or picked (its file button).

import (
	"context"
	"fmt"
	"strconv"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
)

// listenShots registers native listeners on the document for the report
// form's screenshots: a paste into the form (#feedback-form), a drop on
// its drop area (#shot-drop), a pick with its file input (#shot-files).
// As for the upload panel's drop zone, they run synchronously (a drop's
// files and a paste's clipboard are readable only then, and the browser
// would open a dropped file), and hand each file to attach on the UI
// goroutine once its bytes are read. dragging says when files are over
// the drop area.
func listenShots(ctx app.Context, dragging func(bool), attach func(name string, size int, data []byte, preview string)) (stop func()) {
	doc := app.Window().Get("document")
	var listeners docListeners
	add := listeners.add
	within := func(e app.Value, selector string) bool {
		t := e.Get("target")
		return t.Truthy() && t.Get("closest").Type() == app.TypeFunction && t.Call("closest", selector).Truthy()
	}
	read := func(file app.Value) {
		name, size := file.Get("name").String(), file.Get("size").Int()
		preview := app.Window().Get("URL").Call("createObjectURL", file).String()
		// A file past the limit is read only as far as it takes to say
		// so: the form refuses it by its size.
		n := min(size, model.ScreenshotMaxBytes+1)
		ctx.Async(func() {
			var data []byte
			buf, err := await(context.Background(), file.Call("slice", 0, n).Call("arrayBuffer"))
			if err == nil {
				u8 := app.Window().Get("Uint8Array").New(buf)
				data = make([]byte, u8.Length())
				app.CopyBytesToGo(data, u8)
			}
			ctx.Dispatch(func(app.Context) { attach(name, size, data, preview) })
		})
	}
	readAll := func(files app.Value) {
		for i := 0; files.Truthy() && i < files.Length(); i++ {
			read(files.Index(i))
		}
	}
	depth := 0
	add("dragenter", func(e app.Value) {
		if carriesFiles(e) && within(e, "#shot-drop") {
			e.Call("preventDefault")
			if depth++; depth == 1 {
				ctx.Dispatch(func(app.Context) { dragging(true) })
			}
		}
	})
	add("dragover", func(e app.Value) {
		if carriesFiles(e) && within(e, "#shot-drop") {
			e.Call("preventDefault")
			e.Get("dataTransfer").Set("dropEffect", "copy")
		}
	})
	add("dragleave", func(e app.Value) {
		if carriesFiles(e) && within(e, "#shot-drop") && depth > 0 {
			if depth--; depth == 0 {
				ctx.Dispatch(func(app.Context) { dragging(false) })
			}
		}
	})
	add("drop", func(e app.Value) {
		if !carriesFiles(e) || !within(e, "#shot-drop") {
			return
		}
		e.Call("preventDefault")
		depth = 0
		ctx.Dispatch(func(app.Context) { dragging(false) })
		readAll(e.Get("dataTransfer").Get("files"))
	})
	add("paste", func(e app.Value) {
		if !within(e, "#feedback-form") {
			return
		}
		items := e.Get("clipboardData").Get("items")
		var files []app.Value
		for i := 0; items.Truthy() && i < items.Length(); i++ {
			if it := items.Index(i); it.Get("kind").String() == "file" {
				if f := it.Call("getAsFile"); f.Truthy() {
					files = append(files, f)
				}
			}
		}
		if len(files) == 0 {
			return // text pastes as text
		}
		e.Call("preventDefault")
		for _, f := range files {
			read(f)
		}
	})
	// The picker opens from the press itself (a browser opens it only
	// for a person's gesture).
	add("click", func(e app.Value) {
		if within(e, "#choose-shots") {
			if in := doc.Call("getElementById", "shot-files"); in.Truthy() {
				in.Call("click")
			}
		}
	})
	add("change", func(e app.Value) {
		t := e.Get("target")
		if t.Get("id").String() != "shot-files" {
			return
		}
		readAll(t.Get("files"))
		t.Set("value", "") // the same file again fires change again
	})
	return listeners.stop
}

// dispatch runs f on the page's own context: the page renders afterwards
// (a row's handler context is the row's).
func (p *BuildsPage) dispatch(f func()) {
	if p.ctx != nil {
		p.ctx.Dispatch(func(app.Context) { f() })
	}
}

// releasePreview frees a screenshot's preview address.
func releasePreview(preview string) {
	if app.IsClient && preview != "" {
		app.Window().Get("URL").Call("revokeObjectURL", preview)
	}
}

// renderComposer is the report form: the build (theirs by default), the
// text, the screenshots, Send.
func (p *BuildsPage) renderComposer() app.UI {
	c := p.composer
	if c == nil || c.ExtensionID == 0 {
		return nil
	}
	var builds []app.UI
	builds = append(builds, app.Option().Value("0").Text("The build I get").Selected(c.Bundle == 0))
	rows := p.builds.rows()
	for i := 0; i < rows.Len() && i < 50; i++ {
		b, ok := rows.At(i)
		if !ok || b.ExtensionID != c.ExtensionID {
			continue
		}
		label := fmt.Sprintf("#%d (%s)", b.Number, b.Version)
		if b.Current {
			label += " · current"
		}
		builds = append(builds, app.Option().Value(strconv.FormatInt(b.Number, 10)).Text(label).Selected(c.Bundle == b.Number))
	}
	var status app.UI
	switch {
	case c.Err != nil:
		status = app.P().ID("feedback-error").Class("state state-error").Attr("role", "alert").Text(problemText(c.Err))
	case c.Sent != nil:
		status = app.P().ID("feedback-sent").Class("state").Attr("role", "status").
			Text(fmt.Sprintf("Thank you: report #%d is with the extension's team, on %s.", c.Sent.ID, model.ReportBuild(*c.Sent)))
	case c.Sending:
		status = app.P().ID("feedback-sending").Class("state").Attr("role", "status").Text("Sending your report…")
	}
	drop := app.Div().ID("shot-drop").Class("shot-drop")
	if p.dragging {
		drop = drop.Class("drag-over")
	}
	return app.Form().ID("feedback-form").Class("feedback-form").OnSubmit(p.onSendReport).Body(
		app.H2().Text("Report a problem"),
		app.Label().For("feedback-build").Text("On build"),
		app.Select().ID("feedback-build").OnChange(p.onReportBuild).Body(builds...),
		app.Label().For("feedback-text").Text("What happened?"),
		app.Textarea().ID("feedback-text").MaxLength(betaport.MaxFeedbackText).
			Placeholder("What you did, what you expected, what happened instead.").OnInput(p.onReportText), // keeps what is typed (see typedValue)
		drop.Body(
			app.P().ID("shot-help").Class("muted").Text(fmt.Sprintf(
				"Screenshots: paste one here, drop it here, or choose files. PNG, JPEG or WebP, up to %d, 5 MB each.", betaport.MaxFeedbackScreenshots)),
			button().ID("choose-shots").Type("button").Aria("describedby", "shot-help").Text("Choose screenshots…"),
			app.Input().ID("shot-files").Type("file").Multiple(true).Accept(model.ScreenshotTypes).Hidden(true).TabIndex(-1),
			app.If(len(c.Shots) > 0, app.Ul().ID("shot-list").Class("shot-list").Body(app.Range(c.Shots).Slice(func(i int) app.UI {
				// Removed on the page's context, which renders the form again.
				return &shotItem{Shot: c.Shots[i], OnRemove: func(id int) { p.dispatch(func() { c.Remove(id) }) }}
			}))),
		),
		button().ID("send-feedback").Type("submit").Class("primary").Aria("disabled", c.Sending).Text("Send report"),
		status,
	)
}

func (p *BuildsPage) onReportText(ctx app.Context, e app.Event) {
	if p.composer != nil {
		p.composer.Text = ctx.JSSrc().Get("value").String()
	}
}

func (p *BuildsPage) onReportBuild(ctx app.Context, e app.Event) {
	if p.composer != nil {
		p.composer.Bundle, _ = strconv.ParseInt(ctx.JSSrc().Get("value").String(), 10, 64)
	}
}

func (p *BuildsPage) onSendReport(ctx app.Context, e app.Event) {
	e.PreventDefault()
	if p.composer != nil {
		p.composer.Send()
	}
}

// renderMyReports is the tester's own reports, newest first, with their
// status.
func (p *BuildsPage) renderMyReports() app.UI {
	r := p.mine
	if r == nil {
		return nil
	}
	rows := r.Rows()
	if rows.Len() == 0 {
		return nil
	}
	return app.Section().ID("my-reports").Aria("labelledby", "my-reports-title").Body(
		app.H2().ID("my-reports-title").Text("Your reports"),
		app.Ul().Class("my-reports").Body(app.Range(make([]struct{}, rows.Len())).Slice(func(i int) app.UI {
			f, _ := rows.At(i)
			text := model.FirstLine(f.Text, 120)
			if text == "" {
				text = "(a screenshot)"
			}
			return app.Li().DataSet("report", f.ID).Body(
				app.Span().Class("badge badge-"+f.Status).Text(model.FeedbackStatusText(f.Status)),
				app.Text(fmt.Sprintf(" #%d on %s · %s · ", f.ID, model.ReportBuild(f), f.CreatedAt.Local().Format("2 Jan 15:04"))),
				app.Span().Class("my-report-text").Text(text),
			)
		})),
		app.If(r.List.HasMore, button().ID("more-reports").Type("button").Text("Show older reports").
			OnClick(func(ctx app.Context, e app.Event) { r.More() })),
	)
}

// shotItem is one screenshot on the form, its own component so that its
// Remove always removes the shot it shows (an element reused for another
// shot keeps its first handler: go-app #1107).
type shotItem struct {
	app.Compo

	Shot     model.Shot
	OnRemove func(id int)
}

func (s *shotItem) Render() app.UI {
	return app.Li().DataSet("shot", s.Shot.ID).Body(
		app.Img().Src(s.Shot.Preview).Alt(s.Shot.Name),
		app.Span().Title(s.Shot.Name).Text(fmt.Sprintf("%s, %d KB", s.Shot.Name, (s.Shot.Size+1023)/1024)),
		button().Type("button").Class("remove-shot").Aria("label", "Remove "+s.Shot.Name).Text("Remove").OnClick(s.remove),
	)
}

func (s *shotItem) remove(ctx app.Context, e app.Event) {
	if s.OnRemove != nil {
		s.OnRemove(s.Shot.ID)
	}
}
