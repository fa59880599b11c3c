package screenshot_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/screenshot"
)

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, 0, color.RGBA{R: uint8(x), A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// chunk is a PNG chunk of typ holding data.
func chunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	return b.Bytes()
}

// withChunk puts a chunk right after a PNG's header chunk.
func withChunk(p []byte, c []byte) []byte {
	const afterIHDR = 8 + 25
	return append(append(append([]byte{}, p[:afterIHDR]...), c...), p[afterIHDR:]...)
}

// The three types are taken, encoded again: a PNG and a WebP as PNG, a
// JPEG as JPEG, at their own size.
func TestTakesScreenshots(t *testing.T) {
	webp, err := os.ReadFile("testdata/blue-purple-pink.lossy.webp")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, declared string
		data           []byte
		kept           string
		w, h           int
	}{
		{"png", "image/png", pngOf(t, 64, 32), screenshot.PNG, 64, 32},
		{"jpeg", "image/jpeg", jpegOf(t, 40, 30), screenshot.JPEG, 40, 30},
		{"webp", "image/webp", webp, screenshot.PNG, 0, 0},
		{"png, no type said", "", pngOf(t, 8, 8), screenshot.PNG, 8, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			img, err := screenshot.Take(c.declared, bytes.NewReader(c.data))
			if err != nil {
				t.Fatal(err)
			}
			if img.Type != c.kept || (c.w != 0 && (img.Width != c.w || img.Height != c.h)) || img.Width < 1 {
				t.Fatalf("kept %s %d×%d, want %s %d×%d", img.Type, img.Width, img.Height, c.kept, c.w, c.h)
			}
			cfg, format, err := image.DecodeConfig(bytes.NewReader(img.Data))
			if err != nil || "image/"+format != img.Type || cfg.Width != img.Width {
				t.Fatalf("what is kept reads as %s %+v (%v)", format, cfg, err)
			}
		})
	}
}

// What is kept is pixels: text chunks, EXIF and anything after the image
// (a polyglot's HTML or archive) are gone.
func TestKeepsPixelsOnly(t *testing.T) {
	p := withChunk(pngOf(t, 16, 16), chunk("tEXt", []byte("Comment\x00GPS 51.5,-0.12 <script>alert(1)</script>")))
	polyglot := append(p, []byte("<html><script>alert(document.cookie)</script></html>PK\x03\x04")...)
	img, err := screenshot.Take("image/png", bytes.NewReader(polyglot))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"tEXt", "GPS", "script", "html", "PK\x03\x04"} {
		if bytes.Contains(img.Data, []byte(s)) {
			t.Errorf("the kept PNG still holds %q", s)
		}
	}
	// A JPEG with an EXIF segment (APP1) after its SOI.
	j := jpegOf(t, 16, 16)
	exif := append([]byte{0xFF, 0xE1, 0x00, 0x16}, []byte("Exif\x00\x00GPS 51.5,-0.12")...)
	withExif := append(append(append([]byte{}, j[:2]...), exif...), j[2:]...)
	img, err = screenshot.Take("image/jpeg", bytes.NewReader(withExif))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(img.Data, []byte("Exif")) || bytes.Contains(img.Data, []byte("GPS")) {
		t.Error("the kept JPEG still holds its EXIF")
	}
}

// Whatever is not a PNG, JPEG or WebP as it says, or is too big to decode,
// is refused with a message that says why, naming the field.
func TestRefusesHostileImages(t *testing.T) {
	// A PNG header that says 100,000×100,000: a decompression bomb's
	// small file.
	bomb := pngOf(t, 1, 1)
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 100_000)
	binary.BigEndian.PutUint32(ihdr[4:], 100_000)
	copy(ihdr[8:], []byte{8, 6, 0, 0, 0})
	bomb = append(append(append([]byte{}, bomb[:8]...), chunk("IHDR", ihdr)...), bomb[8+25:]...)
	// Within the sides, over the pixels: 8000×4000 is 32 million.
	wide := pngOf(t, 1, 1)
	binary.BigEndian.PutUint32(ihdr[0:], 8000)
	binary.BigEndian.PutUint32(ihdr[4:], 4000)
	wide = append(append(append([]byte{}, wide[:8]...), chunk("IHDR", ihdr)...), wide[8+25:]...)
	good := pngOf(t, 32, 32)
	for _, c := range []struct {
		name, declared string
		data           []byte
		says           string
	}{
		{"svg with a script", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "not a PNG, JPEG or WebP"},
		{"svg as png", "image/png", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`), "not a PNG, JPEG or WebP"},
		{"html", "image/png", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), "not a PNG, JPEG or WebP"},
		{"gif", "image/gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "not a PNG, JPEG or WebP"},
		{"a png that says jpeg", "image/jpeg", good, "says it is a JPEG image but is a PNG image"},
		{"a jpeg that says png", "image/png", jpegOf(t, 8, 8), "says it is a PNG image but is a JPEG image"},
		{"a bomb", "image/png", bomb, "100000×100000"},
		{"too many pixels", "image/png", wide, "8000×4000"},
		{"truncated", "image/png", good[:len(good)/2], "does not decode"},
		{"png signature alone", "image/png", good[:8], "does not read"},
		{"empty", "image/png", nil, "empty"},
		{"over 5 MB", "image/png", append(append([]byte{}, good...), make([]byte, screenshot.MaxBytes)...), "over 5 MB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			img, err := screenshot.Take(c.declared, bytes.NewReader(c.data))
			var e *betaport.Error
			if err == nil {
				t.Fatalf("taken: %s %d×%d", img.Type, img.Width, img.Height)
			}
			if !errors.As(err, &e) || e.Code != betaport.EINVALID || e.Param != "screenshots" || !strings.Contains(e.Message, c.says) {
				t.Fatalf("refused with %v; want EINVALID on screenshots saying %q", err, c.says)
			}
		})
	}
}
