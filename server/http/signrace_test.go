package http_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/publish"
)

// Issue 29: on file storage a zip PUT to the upload URL while sign ran
// was published under the first zip's size and SHA-256, unchecked (5 of
// 6 tries with a 100 MB zip). What sign validates, hashes, packs and
// publishes must be the very same bytes, and a PUT once sign has begun is
// refused, never answered 200 and dropped.

// holdingStore holds the first sign of one extension that begins after
// it is armed (the sign lock taken, the upload read) until released.
type holdingStore struct {
	publish.Store
	extensionID int64
	armed       atomic.Bool
	held        chan struct{}
	release     chan struct{}
}

func (h *holdingStore) LatestUpload(ctx context.Context, extensionID int64) (*betaport.Upload, error) {
	u, err := h.Store.LatestUpload(ctx, extensionID)
	if extensionID == h.extensionID && h.armed.CompareAndSwap(true, false) {
		close(h.held)
		<-h.release
	}
	return u, err
}

type reply struct {
	status int
	body   []byte
}

// evilZip is a zip a sign must refuse: an entry that climbs out of the
// extension's folder.
func evilZip(t *testing.T) []byte {
	return makeZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.9.9"}`,
		"../../evil.js": "steal()",
	})
}

func TestZipPutDuringSignIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	good := validZip(t, "2.0.0")
	u := p.requestURL(t)
	if resp, body := p.put(t, u.URL, api.ZipContentType, good); resp.StatusCode != 200 {
		t.Fatalf("PUT the good zip = %d %s", resp.StatusCode, body)
	}

	hold := &holdingStore{Store: e.App.Publish.Store, extensionID: p.ext.ID, held: make(chan struct{}), release: make(chan struct{})}
	hold.armed.Store(true)
	e.App.Publish.Store = hold
	signed := make(chan reply, 1)
	go func() {
		resp, body := p.sign(t)
		signed <- reply{resp.StatusCode, body}
	}()
	<-hold.held // sign has begun

	put := make(chan reply, 1)
	go func() {
		resp, body := p.put(t, u.URL, api.ZipContentType, evilZip(t))
		put <- reply{resp.StatusCode, body}
	}()
	// Let sign go on once the PUT's bytes are all stored (its own copy,
	// waiting for the sign to end) or the PUT is answered, whichever the
	// service does.
	var early *reply
	for tick := time.NewTicker(5 * time.Millisecond); early == nil && !hasKey(e.keys(t, "uploads/"), ".put-"); {
		select {
		case a := <-put:
			early = &a
		case <-tick.C:
		}
	}
	close(hold.release)

	s := <-signed
	if s.status != 200 {
		t.Fatalf("sign = %d %s, want the good zip published", s.status, s.body)
	}
	var b betaport.Bundle
	if err := json.Unmarshal(s.body, &b); err != nil {
		t.Fatal(err)
	}
	pa := early
	if pa == nil {
		a := <-put
		pa = &a
	}
	if pa.status != http.StatusConflict || !strings.Contains(string(pa.body), "/problems/upload-closed") {
		t.Errorf("the PUT during sign = %d %s, want 409 upload-closed", pa.status, pa.body)
	}
	sum := sha256.Sum256(good)
	if b.SHA256 != hex.EncodeToString(sum[:]) || b.Size != int64(len(good)) {
		t.Errorf("the bundle says %d bytes, SHA-256 %s; the good zip is %d bytes, %x", b.Size, b.SHA256, len(good), sum)
	}
	if got := p.served(t); got.bytes != string(good) {
		t.Errorf("testers are served %d bytes that are not the good zip", len(got.bytes))
	}
	if keys := e.keys(t, "uploads/"); hasKey(keys, ".put-") {
		t.Errorf("the refused PUT left its bytes in storage: %v", keys)
	}
}

func hasKey(keys []string, part string) bool {
	for _, k := range keys {
		if strings.Contains(k, part) {
			return true
		}
	}
	return false
}

// The race at real timing, on either storage: a 20 MB zip, a sign, and a
// PUT of another zip to the same URL at once, again and again. Whatever
// the order, the published bytes are the ones that were checked: they
// hash to the bundle's SHA-256, and they are the good zip (the other one
// never passes the check).
func TestZipPutDuringSignRealTiming(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.Publish.Config.Burst = 1000
	p := newPipeline(t, e, betaport.PlanProfessional)
	big := bigValidZip(t, "3.0.0", 20<<20)
	evil := evilZip(t)
	for try := range 4 {
		u := p.askURL(t)
		if resp, body := p.put(t, u.URL, api.ZipContentType, big); resp.StatusCode != 200 {
			t.Fatalf("try %d: PUT = %d %s", try, resp.StatusCode, body)
		}
		var wg sync.WaitGroup
		var sign, put reply
		wg.Add(2)
		go func() {
			defer wg.Done()
			resp, body := p.sign(t)
			sign = reply{resp.StatusCode, body}
		}()
		go func() {
			defer wg.Done()
			resp, body := p.put(t, u.URL, api.ZipContentType, evil)
			put = reply{resp.StatusCode, body}
		}()
		wg.Wait()
		switch sign.status {
		case 200:
			var b betaport.Bundle
			json.Unmarshal(sign.body, &b)
			got := p.served(t)
			sum := sha256.Sum256([]byte(got.bytes))
			if got.number != b.Number || hex.EncodeToString(sum[:]) != b.SHA256 || int64(len(got.bytes)) != b.Size {
				t.Errorf("try %d: bundle %d says %d bytes %s, testers get bundle %d of %d bytes %x", try, b.Number, b.Size, b.SHA256, got.number, len(got.bytes), sum)
			}
			if !bytes.Equal([]byte(got.bytes), big) {
				t.Errorf("try %d: the published bytes are not the checked zip (PUT during sign: %d %s)", try, put.status, put.body)
			}
			if put.status == 200 && e.Backend == backendFiles {
				t.Errorf("try %d: a PUT answered 200 while its bytes were not published", try)
			}
		case 422:
			// The evil zip arrived before sign read the upload: refused.
		default:
			t.Errorf("try %d: sign = %d %s", try, sign.status, sign.body)
		}
	}
}

// bigValidZip is a valid extension zip of about size bytes (stored, so
// that it is that large).
func bigValidZip(t testing.TB, version string, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(w, `{"manifest_version": 3, "name": "Tab Tamer", "version": %q}`, version)
	w, err = zw.CreateHeader(&zip.FileHeader{Name: "data.bin", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("betaport"), 1<<13)
	for n := 0; n < size; n += len(chunk) {
		w.Write(chunk)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A received upload whose zip is gone from storage (a restore from a
// backup keeps no unpublished zip) answers its sign with 410 and what to
// do, never a 500 (issue 29).
func TestSignWithoutTheReceivedZipAnswers410(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	u := p.requestURL(t)
	if resp, body := p.put(t, u.URL, api.ZipContentType, validZip(t, "1.0")); resp.StatusCode != 200 {
		t.Fatalf("PUT = %d %s", resp.StatusCode, body)
	}
	for _, key := range e.keys(t, "uploads/") {
		if err := e.Blobs.Delete(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	}
	resp, body := p.sign(t)
	wantProblem(t, resp, body, http.StatusGone, "/problems/upload-expired")
}
