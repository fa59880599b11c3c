package http

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/web"
)

// uncompressedLengthHeader tells go-app's loader the size of app.wasm once
// decoded, so its progress is right when the bytes arrive brotli-encoded.
const uncompressedLengthHeader = "X-Uncompressed-Content-Length"

// assets serves the embedded files of package web under /web/, plus
// /wasm_exec.js and /robots.txt. Files with precompressed siblings (.br,
// .gz) are sent encoded to clients that accept it.
type assets struct {
	fsys    fs.FS
	files   map[string]*asset // by request path
	version string
}

type asset struct {
	name    string            // name in fsys
	etag    string            // of the raw bytes
	size    int64             // raw size
	encoded map[string]string // encoding -> name in fsys
	goroot  string            // served from disk instead (see newAssets)
	ctype   string
}

// HasApp reports whether the browser app is embedded: make builds it into
// the binary; a plain go build or go install does not.
func HasApp() bool {
	_, err := fs.Stat(web.FS, "app.wasm")
	return err == nil
}

// BuildID names this build, as pages, /healthz and --version show it: the
// linker's Version (make sets the first 12 hex digits of app.wasm's
// SHA-256), else the same digits of the embedded app.wasm, else "dev".
//
// It is worked out once: /healthz answers with it on every check, and
// hashing the 10 MB wasm each time would make a health check cost a
// download's worth of CPU.
func BuildID() string { return buildID() }

var buildID = sync.OnceValue(func() string {
	if Version != "" {
		return Version
	}
	f, err := web.FS.Open("app.wasm")
	if err != nil {
		return "dev"
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil))[:12]
})

func newAssets(logger *slog.Logger) *assets {
	a := &assets{fsys: web.FS, files: map[string]*asset{}}
	entries, _ := fs.ReadDir(web.FS, ".")
	for _, e := range entries {
		name := e.Name()
		ext := path.Ext(name)
		if e.IsDir() || ext == ".go" || ext == ".br" || ext == ".gz" {
			continue
		}
		f := &asset{name: name, encoded: map[string]string{}, ctype: contentType(name)}
		h := sha256.New()
		if file, err := web.FS.Open(name); err == nil {
			f.size, _ = io.Copy(h, file)
			file.Close()
		}
		f.etag = hex.EncodeToString(h.Sum(nil))[:20]
		for _, enc := range []struct{ ext, name string }{{".br", "br"}, {".gz", "gzip"}} {
			if _, err := fs.Stat(web.FS, name+enc.ext); err == nil {
				f.encoded[enc.name] = name + enc.ext
			}
		}
		a.files["/web/"+name] = f
		if name == "app.wasm" && Version == "" {
			a.version = f.etag[:12] // what BuildID says, hashed once
		}
	}
	if a.version == "" {
		a.version = BuildID()
	}
	if _, ok := a.files["/web/app.wasm"]; !ok {
		logger.Warn("web/app.wasm is not built: pages will not start the app. Run `make wasm`.")
	}
	// wasm_exec.js must match the Go that built app.wasm (go-app embeds an
	// older copy). make copies GOROOT's into web/; a plain `go test` falls
	// back to the running toolchain's file.
	if f, ok := a.files["/web/wasm_exec.js"]; ok {
		a.files["/wasm_exec.js"] = f
	} else {
		a.files["/wasm_exec.js"] = &asset{goroot: filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js"), ctype: "text/javascript; charset=utf-8"}
	}
	if f, ok := a.files["/web/robots.txt"]; ok {
		a.files["/robots.txt"] = f
	}
	return a
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".wasm":
		return "application/wasm"
	case ".js":
		return "text/javascript; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, ok := a.files[r.URL.Path]
	if ok && f.name == "app.wasm" {
		setServed(r, "wasm")
	}
	if !ok {
		detail := "There is no such file. Static files live under /web/."
		if r.URL.Path == "/web/app.wasm" {
			detail = "The browser app is not built into this server. Build it with `make build` (or `make wasm`) and restart."
		}
		writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound, detail))
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "no-cache") // revalidate; a 304 costs no body
	h.Set("X-Content-Type-Options", "nosniff")
	if f.goroot != "" {
		file, err := os.Open(f.goroot)
		if err != nil {
			writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound, "wasm_exec.js is not built in. Run `make wasm`."))
			return
		}
		defer file.Close()
		st, _ := file.Stat()
		http.ServeContent(w, r, "", st.ModTime(), file)
		return
	}
	name, etag := f.name, f.etag
	if len(f.encoded) > 0 {
		h.Add("Vary", "Accept-Encoding")
		for _, enc := range []string{"br", "gzip"} {
			if encName, ok := f.encoded[enc]; ok && acceptsEncoding(r, enc) {
				name, etag = encName, f.etag+"-"+enc
				h.Set("Content-Encoding", enc)
				h.Set(uncompressedLengthHeader, strconv.FormatInt(f.size, 10))
				break
			}
		}
	}
	file, err := a.fsys.Open(name)
	if err != nil {
		writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound, "There is no such file."))
		return
	}
	defer file.Close()
	h.Set("ETag", `"`+etag+`"`)
	// Embedded files have no modification time; the ETag does the caching.
	http.ServeContent(w, r, "", time.Time{}, file.(io.ReadSeeker))
}

// acceptsEncoding reports whether the request's Accept-Encoding lists enc
// with a non-zero quality.
func acceptsEncoding(r *http.Request, enc string) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), enc) {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
