package publish_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/server/publish"
)

// FuzzUploadURL: only the URL the server signed opens an upload; any
// change to its path or query, or any other URL, is refused.
func FuzzUploadURL(f *testing.F) {
	s := &publish.Service{Secret: []byte("fuzz secret"), BaseURL: "http://127.0.0.1:1"}
	expires := time.Now().Add(time.Hour)
	signed := s.UploadURL(7, expires)
	query := signed[strings.Index(signed, "?")+1:]
	for _, q := range []string{query, query + "&x=1", strings.Replace(query, "expires=", "expires=1", 1), "", "signature=&expires=1", "expires=99999999999999999999&signature=a"} {
		f.Add("/uploads/7", q)
	}
	want, _ := url.ParseQuery(query)
	f.Fuzz(func(t *testing.T, path, rawQuery string) {
		req := &http.Request{Method: "PUT", URL: &url.URL{Path: path, RawQuery: rawQuery}}
		if !s.UploadURLAccepted(req.URL.Path, req.URL.Query(), 7) {
			return
		}
		// Accepted: it must carry the signature and expiry issued for
		// upload 7, on its path.
		got, _ := url.ParseQuery(rawQuery)
		if path != "/uploads/7" || got.Get("signature") != want.Get("signature") || got.Get("expires") != want.Get("expires") {
			t.Fatalf("accepted %s?%s", path, rawQuery)
		}
	})
}
