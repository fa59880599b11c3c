package ui

// Browser calls the upload panel and the settings page need beyond
// net/http: a PUT of a File through XMLHttpRequest (the browser streams the
// file and reports upload progress), reading the first bytes or the text of
// a File, and saving a download made in the page.
//
// They go through go-app's Value, which is syscall/js in the browser and an
// inert stub elsewhere, so this file needs no build constraint: the server
// compiles it to prerender pages and never calls it (every caller runs from
// a browser event or OnMount, which the server does not run).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/upload"
)

var errNotInBrowser = errors.New("this works in the browser only")

// jsFile is a File from a drop or the file picker, as the upload runner
// takes it. Its bytes stay in the browser: Go holds a reference, its name,
// type and size.
type jsFile struct {
	v    app.Value
	name string
	typ  string
	size int64
}

var _ upload.File = (*jsFile)(nil)

func fileOf(v app.Value) *jsFile {
	return &jsFile{v: v, name: v.Get("name").String(), typ: v.Get("type").String(), size: int64(v.Get("size").Float())}
}

func (f *jsFile) Name() string { return f.name }
func (f *jsFile) Type() string { return f.typ }
func (f *jsFile) Size() int64  { return f.size }

// filesOf reads a FileList. Call it while the event that carries the list
// is being dispatched: a drop's DataTransfer is emptied once it returns.
func filesOf(list app.Value) []upload.File {
	if list == nil || !list.Truthy() {
		return nil
	}
	n := list.Length()
	files := make([]upload.File, 0, n)
	for i := 0; i < n; i++ {
		files = append(files, fileOf(list.Index(i)))
	}
	return files
}

// await waits until promise settles. It blocks, so call it from a
// goroutine of its own (ctx.Async), never from the UI goroutine or a JS
// callback.
func await(ctx context.Context, promise app.Value) (app.Value, error) {
	if app.IsServer {
		return nil, errNotInBrowser
	}
	type result struct {
		v   app.Value
		err error
	}
	done := make(chan result, 1)
	ok := app.FuncOf(func(_ app.Value, args []app.Value) any {
		done <- result{v: firstArg(args)}
		return nil
	})
	fail := app.FuncOf(func(_ app.Value, args []app.Value) any {
		done <- result{err: jsError(firstArg(args))}
		return nil
	})
	release := func() { ok.Release(); fail.Release() }
	promise.Call("then", ok, fail)
	select {
	case r := <-done:
		release()
		return r.v, r.err
	case <-ctx.Done():
		go func() { <-done; release() }() // file reads always settle
		return nil, ctx.Err()
	}
}

func firstArg(args []app.Value) app.Value {
	if len(args) == 0 {
		return app.Undefined()
	}
	return args[0]
}

func jsError(v app.Value) error {
	if v == nil || !v.Truthy() {
		return errors.New("the browser refused without saying why")
	}
	if m := v.Get("message"); m.Truthy() {
		return errors.New(m.String())
	}
	return errors.New(v.String())
}

// Head returns the first n bytes of f: only those are copied into Go.
func (f *jsFile) Head(ctx context.Context, n int) ([]byte, error) {
	buf, err := await(ctx, f.v.Call("slice", 0, n).Call("arrayBuffer"))
	if err != nil {
		return nil, err
	}
	u8 := app.Window().Get("Uint8Array").New(buf)
	b := make([]byte, u8.Length())
	app.CopyBytesToGo(b, u8)
	return b, nil
}

// Text returns the text of a small file (a key file).
func (f *jsFile) Text(ctx context.Context) ([]byte, error) {
	v, err := await(ctx, f.v.Call("text"))
	if err != nil {
		return nil, err
	}
	return []byte(v.String()), nil
}

// Put PUTs f to url (call 2 of the submit flow, see client.Putter) with
// XMLHttpRequest, Content-Type application/zip:
// the browser streams the File from disk, so its bytes never enter wasm
// memory, and it reports upload progress, which fetch() does not.
// progress is called from the browser's event loop with bytes sent and
// total. It blocks until the answer; cancelling ctx aborts the transfer.
// A non-2xx answer comes back as an *api.Problem.
func (f *jsFile) Put(ctx context.Context, url string, progress func(sent, total int64)) error {
	if app.IsServer {
		return errNotInBrowser
	}
	xhr := app.Window().Get("XMLHttpRequest").New()
	done := make(chan string, 1)
	var funcs []app.Func
	on := func(target app.Value, event string, fn func(app.Value)) {
		h := app.FuncOf(func(_ app.Value, args []app.Value) any {
			fn(firstArg(args))
			return nil
		})
		funcs = append(funcs, h)
		target.Call("addEventListener", event, h)
	}
	defer func() {
		for _, h := range funcs {
			h.Release()
		}
	}()
	on(xhr.Get("upload"), "progress", func(e app.Value) {
		if e.Get("lengthComputable").Bool() {
			progress(int64(e.Get("loaded").Float()), int64(e.Get("total").Float()))
		}
	})
	for _, event := range []string{"load", "error", "abort", "timeout"} {
		on(xhr, event, func(app.Value) {
			select {
			case done <- event:
			default:
			}
		})
	}
	xhr.Call("open", http.MethodPut, url)
	xhr.Call("setRequestHeader", "Content-Type", api.ZipContentType)
	xhr.Call("send", f.v)

	var event string
	select {
	case event = <-done:
	case <-ctx.Done():
		xhr.Call("abort") // fires "abort" at once, on this goroutine
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		return ctx.Err()
	}
	if event != "load" {
		return &api.Problem{Status: 0, Title: "Upload interrupted",
			Detail: "The upload did not reach the service (the connection failed). Nothing was published. Check your connection, then try again."}
	}
	status := xhr.Get("status").Int()
	if status >= 200 && status < 300 {
		return nil
	}
	return client.ReadProblem(&http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": {xhr.Call("getResponseHeader", "Content-Type").String()}},
		Body:       io.NopCloser(strings.NewReader(xhr.Get("responseText").String())),
	})
}

// saveFile makes the browser save text as a file named name, as a
// download: the bytes live in a Blob of the page, never in storage.
func saveFile(ctx app.Context, name, mime, text string) {
	if app.IsServer {
		return
	}
	w := app.Window()
	blob := w.Get("Blob").New([]any{text}, map[string]any{"type": mime})
	url := w.Get("URL").Call("createObjectURL", blob).String()
	doc := w.Get("document")
	a := doc.Call("createElement", "a")
	a.Set("href", url)
	a.Set("download", name)
	a.Set("hidden", true)
	doc.Get("body").Call("appendChild", a)
	a.Call("click")
	a.Call("remove")
	// Revoking at once may cancel the download; a minute is plenty.
	ctx.After(time.Minute, func(app.Context) { w.Get("URL").Call("revokeObjectURL", url) })
}
