//go:build !(js && wasm)

package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/andybalholm/brotli"
	"github.com/maxence-charriere/go-app/v9/pkg/app"
)

// resources: the app's files are at the root (/web/app.wasm, served
// below), as Betaport's are.
type resources struct{}

func (resources) Package() string { return "" }
func (resources) Static() string  { return "" }
func (resources) AppWASM() string { return "/web/app.wasm" }

func main() {
	app.Route("/", &hello{})

	addr := flag.String("addr", "127.0.0.1:0", "where to listen")
	dir := flag.String("dir", ".", "the directory whose web/app.wasm is the app")
	wasmExecPath := flag.String("wasm-exec", filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js"), "the wasm_exec.js of the Go that built the app")
	flag.Parse()
	wasm, err := os.ReadFile(filepath.Join(*dir, "web", "app.wasm"))
	if err != nil {
		log.Fatal(err)
	}
	// Brotli, as Betaport serves its wasm. Quality 5, not Betaport's 11:
	// 11 takes half a minute here, and the browser decodes either as fast.
	var br bytes.Buffer
	bw := brotli.NewWriterLevel(&br, 5)
	bw.Write(wasm)
	bw.Close()
	wasmExec, err := os.ReadFile(*wasmExecPath)
	if err != nil {
		log.Fatal(err)
	}
	h := &app.Handler{
		Name:  "Hello",
		Title: "Hello",
		// No icon: go-app's default points at an outside host.
		Icon:      app.Icon{Default: "/web/icon.png", SVG: "/web/icon.svg"},
		Resources: resources{},
	}
	mux := http.NewServeMux()
	etag := fmt.Sprintf(`"%x"`, sha256.Sum256(wasm))
	mux.HandleFunc("GET /web/app.wasm", func(w http.ResponseWriter, r *http.Request) {
		// Revalidated on a repeat visit (a 304), as Betaport's assets are
		// when its service worker does not answer.
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/wasm")
		w.Header().Set("Content-Encoding", "br")
		w.Header().Set("Content-Length", strconv.Itoa(br.Len()))
		w.Write(br.Bytes())
	})
	// go-app embeds an older wasm_exec.js than the Go that built the app.
	mux.HandleFunc("GET /wasm_exec.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(wasmExec)
	})
	mux.Handle("/", h)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
