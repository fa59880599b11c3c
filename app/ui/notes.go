package ui

import (
	"strconv"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/notes"
)

// notesView renders release notes (app/notes' subset) as elements. Every
// piece of text is a text node (go-app creates them as such in the browser
// and escapes them on the server), so HTML in notes shows as the text it
// is; links are only the http(s) ones app/notes made, opened in a new tab
// that gets no handle on this one.
func notesView(id, text string) app.HTMLDiv {
	blocks := notes.Parse(text)
	div := app.Div().Class("notes")
	if id != "" {
		div = div.ID(id)
	}
	return div.Body(
		app.Range(blocks).Slice(func(i int) app.UI { return notesBlock(blocks[i]) }),
	)
}

func notesBlock(b notes.Block) app.UI {
	items := func(i int) app.UI { return app.Li().Body(notesInline(b.Items[i])...) }
	switch b.Kind {
	case notes.Bullets:
		return app.Ul().Body(app.Range(b.Items).Slice(items))
	case notes.Numbered:
		ol := app.Ol()
		if b.Start != 1 {
			ol = ol.Attr("start", strconv.Itoa(b.Start))
		}
		return ol.Body(app.Range(b.Items).Slice(items))
	}
	return app.P().Body(notesInline(b.Items[0])...)
}

func notesInline(t notes.Text) []app.UI {
	out := make([]app.UI, len(t))
	for i, s := range t {
		if s.URL == "" {
			out[i] = app.Text(s.Text)
			continue
		}
		out[i] = app.A().Href(s.URL).Attr("rel", "noopener noreferrer").Attr("target", "_blank").Text(s.Text)
	}
	return out
}
