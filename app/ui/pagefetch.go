package ui

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/maxence-charriere/go-app/v9/pkg/app"
)

// pageFetch sends the app's API requests with the page's fetch(): the
// browser's own HTTP stack, cookies and cache. net/http's client would do
// the same through its js transport, but it links the whole Transport (TLS,
// HTTP/2) for a fallback a browser never takes: a third of the wasm, which
// every visitor downloads (see fetch.DefaultClient).
type pageFetch struct{}

// Do sends req and reads the whole answer (the API's answers are small
// JSON; uploads go through jsFile.Put). Cancelling the request's context
// aborts the fetch.
func (pageFetch) Do(req *http.Request) (*http.Response, error) {
	if app.IsServer {
		return nil, errNotInBrowser
	}
	ctx := req.Context()
	headers := map[string]any{}
	for k, vs := range req.Header {
		headers[k] = strings.Join(vs, ", ")
	}
	init := map[string]any{"method": req.Method, "headers": headers}
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body := app.Window().Get("Uint8Array").New(len(b))
		app.CopyBytesToJS(body, b)
		init["body"] = body
	}
	abort := app.Window().Get("AbortController").New()
	init["signal"] = abort.Get("signal")
	stop := context.AfterFunc(ctx, func() { abort.Call("abort") })
	defer stop()

	resp, err := await(ctx, app.Window().Call("fetch", req.URL.String(), init))
	if err != nil {
		return nil, err
	}
	buf, err := await(ctx, resp.Call("arrayBuffer"))
	if err != nil {
		return nil, err
	}
	u8 := app.Window().Get("Uint8Array").New(buf)
	body := make([]byte, u8.Length())
	app.CopyBytesToGo(body, u8)

	header := http.Header{}
	addHeader := app.FuncOf(func(_ app.Value, args []app.Value) any {
		header.Add(args[1].String(), args[0].String()) // forEach(value, name)
		return nil
	})
	resp.Get("headers").Call("forEach", addHeader)
	addHeader.Release()
	status := resp.Get("status").Int()
	return &http.Response{
		Status:        resp.Get("statusText").String(),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}
