// Command precompress writes FILE.br and FILE.gz beside each FILE given, so
// the server can send app.wasm encoded without compressing it per request.
//
//	precompress [-quality best|fast] FILE...
package main

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/andybalholm/brotli"
)

// brotliLevels are the -quality choices. Every visitor downloads the wasm
// once per build: best (11), 13% smaller than 9, is worth its 40 s per
// build. fast (5) takes half a second for a copy 18% larger: for builds
// that only tests download (make test), where no one measures the bytes.
var brotliLevels = map[string]int{"best": brotli.BestCompression, "fast": 5}

func main() {
	quality := flag.String("quality", "best", "brotli quality: best (what ships) or fast (for tests)")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: precompress [-quality best|fast] FILE...") }
	flag.Parse()
	level, ok := brotliLevels[*quality]
	if !ok || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	for _, name := range flag.Args() {
		if err := compress(name, level); err != nil {
			fmt.Fprintln(os.Stderr, "precompress:", err)
			os.Exit(1)
		}
		// The sizes README speaks of, read from the files just written.
		fmt.Printf("%s: %s raw, %s brotli (quality %s), %s gzip\n", name,
			megabytes(name), megabytes(name+".br"), *quality, megabytes(name+".gz"))
	}
}

// megabytes is a file's size in MB (10⁶ bytes), as a download is counted.
func megabytes(name string) string {
	fi, err := os.Stat(name)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.2f MB", float64(fi.Size())/1e6)
}

func compress(name string, brotliLevel int) error {
	encoders := []struct {
		ext string
		new func(io.Writer) io.WriteCloser
	}{
		{".br", func(w io.Writer) io.WriteCloser { return brotli.NewWriterLevel(w, brotliLevel) }},
		{".gz", func(w io.Writer) io.WriteCloser { z, _ := gzip.NewWriterLevel(w, gzip.BestCompression); return z }},
	}
	for _, enc := range encoders {
		if err := encodeTo(name, name+enc.ext, enc.new); err != nil {
			return err
		}
	}
	return nil
}

// encodeTo writes the encoded copy to a temporary file and renames it, so an
// interrupted build never leaves a truncated copy behind.
func encodeTo(src, dst string, newEncoder func(io.Writer) io.WriteCloser) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	enc := newEncoder(out)
	if _, err := io.Copy(enc, in); err != nil {
		out.Close()
		return err
	}
	if err := enc.Close(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
