package browser_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// An admin adds a webhook on the settings page by typing its URL and
// pressing the button, sees its secret once, presses Send test event and
// sees the delivery arrive as delivered; then deletes it, confirming.
func TestWebhooksOnSettingsPage(t *testing.T) {
	t.Parallel()
	type hit struct {
		signature string
		body      []byte
	}
	var mu sync.Mutex
	var hits []hit
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, hit{r.Header.Get("Betaport-Signature"), body})
		mu.Unlock()
		io.WriteString(w, "thanks")
	}))
	defer rc.Close()

	m, d := startWebhookService(t)
	ext := d.Extensions[0]
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	waitJS(t, ctx, `document.querySelector("#webhooks-empty") !== null`)

	url := rc.URL + "/betaport"
	do(t, ctx, chromedp.Click(chromedp.CSS(`#webhook-url`)), chromedp.SendKeys(chromedp.CSS(`#webhook-url`), url))
	do(t, ctx, chromedp.Click(chromedp.CSS(`#add-webhook`)))
	waitJS(t, ctx, `document.querySelector("#webhook-secret")?.value.startsWith("whsec_") && !document.querySelector("#webhook-created").hidden`)
	secret := evalJS[string](t, ctx, `document.querySelector("#webhook-secret").value`)
	if got := text(t, ctx, `[data-webhook] .webhook-url`); got != url {
		t.Fatalf("the list shows %q, want %q", got, url)
	}
	if focused := evalJS[string](t, ctx, `document.activeElement.id`); focused != "webhook-secret" {
		t.Errorf("after adding, the focus is on %q, want the secret", focused)
	}

	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-webhook] .test-webhook`)))
	waitJS(t, ctx, `document.querySelector('[data-webhook] tr.delivery[data-state="delivered"]') !== null`)
	row := text(t, ctx, `[data-webhook] tr.delivery`)
	if !strings.Contains(row, "ping") || !strings.Contains(row, "delivered") || !strings.Contains(row, "200") {
		t.Fatalf("the delivery row reads %q", row)
	}
	mu.Lock()
	if len(hits) != 1 {
		t.Fatalf("the receiver got %d requests, want the ping", len(hits))
	}
	h := hits[0]
	mu.Unlock()
	ts, v1, _ := strings.Cut(strings.TrimPrefix(h.signature, "t="), ",v1=")
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(h.body)))
	if v1 != hex.EncodeToString(mac.Sum(nil)) || !strings.Contains(string(h.body), `"type":"ping"`) {
		t.Fatalf("the ping %s signed %q does not verify with the secret shown", h.body, h.signature)
	}
	checkAccessible(t, ctx, "settings, a webhook with a delivery")

	// A pipeline publishes: the event reaches the receiver, and its row
	// shows up delivered without a reload.
	zipPath := filepath.Join(t.TempDir(), "next.zip")
	writeFile(t, zipPath, extensionZip(t, map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.5.0"}`}))
	b := submitAsPipeline(t, m.URL(), cliKey(t, m, ext.ID), zipPath)
	waitJS(t, ctx, `[...document.querySelectorAll('[data-webhook] tr.delivery[data-state="delivered"]')].some(r => r.innerText.includes("bundle.published"))`)
	mu.Lock()
	last := hits[len(hits)-1]
	mu.Unlock()
	if want := fmt.Sprintf(`"number":%d`, b.Number); !strings.Contains(string(last.body), want) || !strings.Contains(string(last.body), `"type":"bundle.published"`) {
		t.Fatalf("the receiver got %s, want bundle %d published", last.body, b.Number)
	}

	// Delete asks first; Keep keeps it; Yes deletes it.
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-webhook] .delete-webhook`)))
	waitJS(t, ctx, `document.activeElement.classList.contains("confirm-delete")`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-webhook] .cancel-delete`)))
	waitJS(t, ctx, `document.querySelector("[data-webhook] .delete-webhook") !== null`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-webhook] .delete-webhook`)))
	waitJS(t, ctx, `document.querySelector("[data-webhook] .confirm-delete") !== null`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-webhook] .confirm-delete[aria-disabled="false"]`)))
	waitJS(t, ctx, `document.querySelector("#webhooks-empty") !== null && document.querySelector("[data-webhook]") === null`)
	if list, err := m.Store.FindWebhooks(context.Background(), ext.ID, 0, 10); err != nil || len(list) != 0 {
		t.Fatalf("after deleting, the store has %d webhooks (%v)", len(list), err)
	}
}

// startWebhookService is startService with webhooks allowed to reach the
// test's receivers on loopback.
func startWebhookService(t *testing.T) (*cli.Main, *demo.Result) {
	t.Helper()
	return serve(t, 0, func(m *cli.Main) {
		m.Config.WebhookAllowPrivate = true
		m.Config.WebhookRetryMin = 100 * time.Millisecond
	})
}
