// Command precompress writes FILE.br and FILE.gz beside each FILE given, so
// the server can send app.wasm encoded without compressing it per request.
package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/andybalholm/brotli"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: precompress FILE...")
		os.Exit(2)
	}
	for _, name := range os.Args[1:] {
		if err := compress(name); err != nil {
			fmt.Fprintln(os.Stderr, "precompress:", err)
			os.Exit(1)
		}
	}
}

func compress(name string) error {
	encoders := []struct {
		ext string
		new func(io.Writer) io.WriteCloser
	}{
		// Every visitor downloads the wasm once per build: the highest
		// quality, 13% smaller than 9, is worth its half minute per build.
		{".br", func(w io.Writer) io.WriteCloser { return brotli.NewWriterLevel(w, brotli.BestCompression) }},
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
