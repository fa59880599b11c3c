package cli

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// On S3 storage Betaport answers a download with a redirect to the
// storage. The access token stays with Betaport: Go's client would send
// it on to the same host on another port (versitygw ignores it; S3
// refuses a request that carries two kinds of authentication).
func TestDownloadsKeepTheTokenFromTheStorage(t *testing.T) {
	got := make(chan string, 1)
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		w.Write([]byte("zip bytes"))
	}))
	defer storage.Close()
	betaport := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer bpt_secret" {
			t.Errorf("Betaport got Authorization %q", r.Header.Get("Authorization"))
		}
		http.Redirect(w, r, storage.URL+"/bucket/key?X-Amz-Signature=abc", http.StatusFound)
	}))
	defer betaport.Close()
	r := &remote{server: betaport.URL, token: "bpt_secret"}
	resp, err := r.send(t.Context(), downloadClient, "GET", "/api/extensions/1/bundles/1/download", nil, "*/*")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if auth := <-got; auth != "" {
		t.Errorf("the storage got Authorization %q: the token went past Betaport", auth)
	}
}
