package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/storetest"
)

// FuzzCursor: a cursor decodes only as the list and position it was made
// for; anything else, however made, decodes to nothing.
func FuzzCursor(f *testing.F) {
	s := &bphttp.Server{Secret: []byte("fuzz secret")}
	good := s.EncodeCursor("bundles", 42)
	for _, c := range []string{good, good + "x", "1.", ".", "", "zz.AAAA", strings.Replace(good, "16", "17", 1)} {
		f.Add("bundles", c, int64(7))
	}
	f.Fuzz(func(t *testing.T, list, cursor string, id int64) {
		if id > 0 {
			if got, ok := s.DecodeCursor(list, s.EncodeCursor(list, id)); !ok || got != id {
				t.Fatalf("cursor for %d of %q decodes to %d, %v", id, list, got, ok)
			}
		}
		got, ok := s.DecodeCursor(list, cursor)
		if ok && (got <= 0 || s.EncodeCursor(list, got) != cursor) {
			t.Fatalf("forged cursor %q accepted as %d", cursor, got)
		}
	})
}

// FuzzKeyObject: whatever the body of calls 1 and 3, the answer is a
// problem the caller can act on (4xx), never a server error, and nothing
// is created for a refused key.
func FuzzKeyObject(f *testing.F) {
	e := newEnv(f)
	team := storetest.MustTeam(f, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(f, e.DB, team, "Fuzz")
	key := e.key(f, ext)
	good, _ := json.Marshal(key)
	for _, b := range []string{string(good), string(good) + "{}", `{"service":` + string(good) + `}`, `{"extensionId":1e400,"apiKey":"x"}`,
		`{"extensionId":"` + key.ExtensionID + `","apiKey":"` + key.APIKey + `","x":1}`, `[`, `"\ud800"`, `{"extensionId":null}`} {
		f.Add(b)
	}
	h := e.App.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{api.PathSubmitUpload, api.PathSubmitSign} {
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("POST %s %q = %d %s", path, body, rec.Code, rec.Body)
			}
			if rec.Code >= 400 && rec.Header().Get("Content-Type") != api.ProblemContentType {
				t.Fatalf("POST %s %q = %d without a problem", path, body, rec.Code)
			}
			if rec.Code == 200 && body != string(good) && !json.Valid([]byte(body)) {
				t.Fatalf("POST %s accepted invalid JSON %q", path, body)
			}
		}
	})
}

// FuzzPathIDs: ids in paths, whatever their text, answer 4xx problems or a
// page, never a server error.
func FuzzPathIDs(f *testing.F) {
	e := newEnv(f)
	team := storetest.MustTeam(f, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(f, e.DB, team, "Fuzz")
	admin := e.adminOf(f, team)
	for _, id := range []string{strconv.FormatInt(ext.ID, 10), "0", "-1", "1e3", "9223372036854775808", "%00", "..", "1/2"} {
		f.Add(id, "1")
	}
	h := e.App.Handler()
	f.Fuzz(func(t *testing.T, id, number string) {
		for _, path := range []string{"/api/extensions/" + id, "/api/extensions/" + id + "/bundles/" + number + "/download",
			"/api/extensions/" + id + "/testers/" + number, "/update/" + id + "/x", "/extensions/" + id} {
			req, err := http.NewRequestWithContext(context.Background(), "GET", "http://x"+path, nil)
			if err != nil {
				return
			}
			req.Header = admin.Clone()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("GET %s = %d %s", path, rec.Code, rec.Body)
			}
		}
	})
}

// FuzzEscapeAttributes: for any attribute value go-app writes (Go-quoted),
// the escaped page parses to one element with exactly that value.
func FuzzEscapeAttributes(f *testing.F) {
	for _, v := range []string{hostile, `a"b`, `\`, "é\x00\u2028", "</script>", "&amp;"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		page := `<div id="x" title=` + strconv.Quote(v) + ` hidden>text</div>`
		out, err := bphttp.EscapeAttributes([]byte(page))
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := html.ParseFragment(bytes.NewReader(out), &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body})
		if err != nil || len(nodes) != 1 || nodes[0].Data != "div" || len(nodes[0].Attr) != 3 {
			t.Fatalf("%q escaped to %q: %d nodes", v, out, len(nodes))
		}
		if !utf8.ValidString(v) {
			return // the bytes pass through as they are; a browser decodes them
		}
		want := strings.ReplaceAll(v, "\x00", "\ufffd")
		want = strings.ReplaceAll(strings.ReplaceAll(want, "\r\n", "\n"), "\r", "\n")
		got := ""
		for _, a := range nodes[0].Attr {
			if a.Key == "title" {
				got = a.Val
			}
		}
		if got != want {
			t.Fatalf("title %q reads back as %q", want, got)
		}
	})
}
