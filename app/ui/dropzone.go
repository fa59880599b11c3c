package ui

// The drop zone of the upload panel: files dropped on it (a drag over the
// rest of the page is kept from opening them), or picked with the keyboard.

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/upload"
)

// listenDropZone registers native listeners on the document for the drop
// zone (#drop-zone) and its file picker (#upload-files): dragging says when
// files are dragged over the zone, take gets the files dropped on it or
// picked; both on the UI goroutine. go-app runs its own
// handlers after the browser's event has returned, too late to call
// preventDefault on dragover and drop (the browser would open the dropped
// file) and too late to read a drop's files. These run synchronously and
// hand the rest to the UI goroutine. They sit on the document so that a
// file dropped next to the zone does not replace the page (and the key it
// holds), and so that they survive re-renders of the zone.
func listenDropZone(ctx app.Context, dragging func(on bool), take func([]upload.File)) (stop func()) {
	doc := app.Window().Get("document")
	var listeners docListeners
	add := listeners.add
	depth := 0 // dragenter minus dragleave inside the zone; only listeners touch it
	setDragging := func(on bool) {
		ctx.Dispatch(func(app.Context) { dragging(on) })
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
		ctx.Dispatch(func(app.Context) { take(files) })
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
		ctx.Dispatch(func(app.Context) { take(files) })
	})
	return listeners.stop
}

// docListeners are native listeners on the document, run synchronously
// with the browser's event; stop removes and releases them.
type docListeners []struct {
	event string
	fn    app.Func
}

func (ls *docListeners) add(event string, fn func(e app.Value)) {
	f := app.FuncOf(func(_ app.Value, args []app.Value) any {
		if len(args) > 0 {
			fn(args[0])
		}
		return nil
	})
	app.Window().Get("document").Call("addEventListener", event, f)
	*ls = append(*ls, struct {
		event string
		fn    app.Func
	}{event, f})
}

func (ls *docListeners) stop() {
	doc := app.Window().Get("document")
	for _, l := range *ls {
		doc.Call("removeEventListener", l.event, l.fn)
		l.fn.Release()
	}
	*ls = nil
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
