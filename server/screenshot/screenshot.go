// Package screenshot takes the images testers attach to their feedback: it
// reads each one whole (up to a size), refuses what is not the PNG, JPEG or
// WebP it says it is, refuses dimensions that would take too much memory
// to decode (read from the header, before any pixel is), decodes it, and
// encodes the pixels again. What is kept and served is those pixels only:
// no metadata (EXIF, text chunks, a location), nothing appended after the
// image (a polyglot's script or archive), nothing the browser could take
// for another type.
package screenshot

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"

	"golang.org/x/image/webp"

	"github.com/betaport/betaport/app/betaport"
)

// Limits of one screenshot. A 5K display's screenshot at 2× is 5120×2880,
// 14.7 million pixels; decoding one takes about 4 bytes a pixel.
const (
	// MaxBytes is the largest upload taken, as sent.
	MaxBytes = 5_000_000
	// MaxSide is the widest and tallest image taken, in pixels.
	MaxSide = 8192
	// MaxPixels is the most pixels an image may have: about 64 MB decoded
	// (a 5K screen at 2× is 14.7 million).
	MaxPixels = 16_000_000
)

// The types a screenshot may be.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	WebP = "image/webp"
)

// Image is a screenshot as kept: its type (PNG or JPEG: a WebP is kept as
// PNG, which Go encodes), its size in pixels and its bytes.
type Image struct {
	Type          string
	Width, Height int
	Data          []byte
}

// Take reads one screenshot from r, declared as declared (a Content-Type;
// "" when the sender said none), and returns it decoded and encoded
// again. Anything it refuses is an EINVALID *betaport.Error whose message
// says why and what is taken.
func Take(declared string, r io.Reader) (*Image, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	switch {
	case len(data) == 0:
		return nil, refuse("A screenshot is empty. Attach a PNG, JPEG or WebP image.")
	case len(data) > MaxBytes:
		return nil, refuse(fmt.Sprintf("A screenshot is over %d MB. Attach a smaller one, or crop it.", MaxBytes/1_000_000))
	}
	sniffed := http.DetectContentType(data)
	codec, ok := codecs[sniffed]
	if !ok {
		return nil, refuse(fmt.Sprintf("A screenshot is %s, not a PNG, JPEG or WebP image. Attach one of those.", describe(sniffed)))
	}
	if declared != "" && declared != "application/octet-stream" && declared != sniffed {
		return nil, refuse(fmt.Sprintf("A screenshot says it is %s but is %s. Attach it as what it is.", describe(declared), describe(sniffed)))
	}
	// The header first: dimensions that would take too much memory are
	// refused before a pixel is decoded (a decompression bomb is a small
	// file that says it is huge).
	cfg, err := codec.config(bytes.NewReader(data))
	if err != nil {
		return nil, refuse(fmt.Sprintf("A screenshot does not read as %s (%v): it is cut short or damaged. Take it again, or save it again as a PNG, JPEG or WebP image, and attach that.", describe(sniffed), err))
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxSide || cfg.Height > MaxSide || cfg.Width*cfg.Height > MaxPixels {
		return nil, refuse(fmt.Sprintf("A screenshot is %d×%d pixels; at most %d on a side and %d million pixels are taken. Attach a smaller one.",
			cfg.Width, cfg.Height, MaxSide, MaxPixels/1_000_000))
	}
	img, err := codec.decode(bytes.NewReader(data))
	if err != nil {
		return nil, refuse(fmt.Sprintf("A screenshot does not decode as %s (%v): it is cut short or damaged. Take it again, or save it again as a PNG, JPEG or WebP image, and attach that.", describe(sniffed), err))
	}
	var out bytes.Buffer
	kept := PNG
	if sniffed == JPEG {
		kept = JPEG
		err = jpeg.Encode(&out, img, &jpeg.Options{Quality: 90})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&out, img)
	}
	if err != nil {
		return nil, fmt.Errorf("encoding a screenshot again: %w", err)
	}
	b := img.Bounds()
	return &Image{Type: kept, Width: b.Dx(), Height: b.Dy(), Data: out.Bytes()}, nil
}

// codecs read each type taken: its header alone, and the whole image.
var codecs = map[string]struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}{
	PNG:  {png.DecodeConfig, png.Decode},
	JPEG: {jpeg.DecodeConfig, jpeg.Decode},
	WebP: {webp.DecodeConfig, webp.Decode},
}

// refuse is a screenshot's refusal, naming the field.
func refuse(msg string) error {
	return &betaport.Error{Code: betaport.EINVALID, Param: "screenshots", Message: msg}
}

// describe names a content type for people.
func describe(contentType string) string {
	switch contentType {
	case PNG:
		return "a PNG image"
	case JPEG:
		return "a JPEG image"
	case WebP:
		return "a WebP image"
	case "image/svg+xml", "text/xml; charset=utf-8":
		return "an SVG or XML document"
	case "image/gif":
		return "a GIF image"
	case "text/html; charset=utf-8":
		return "an HTML document"
	}
	return contentType
}
