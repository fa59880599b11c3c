package browser_test

// Black-box tests of issue 20 ("Release notes, rollback, adoption and
// webhooks") as people meet it in the browser, written from the issue and
// its contract without reading the app's code. They act only through the
// DevTools input domain (mouse clicks, typed and inserted text, key
// presses, dropped files) and navigation; JavaScript only reads the page.
// Plain HTTP stands in for pipelines, Chromium's update checks and the
// API reads that check what the page claims.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// ---------------------------------------------------------------- helpers

// bb20Wait waits up to 20 s for expr and says what the page shows when it
// never holds.
func bb20Wait(t *testing.T, ctx context.Context, expr, msg string) {
	t.Helper()
	bb20WaitFor(t, ctx, 20*time.Second, expr, msg)
}

func bb20WaitFor(t *testing.T, ctx context.Context, d time.Duration, expr, msg string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(30*time.Millisecond), chromedp.WithPollingTimeout(d))); err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + "\n" + (document.querySelector("main")?.innerText ?? document.body.innerText)`))
		t.Fatalf("%s (waited %v for %s: %v); the page shows:\n%s", msg, d, expr, err, shown)
	}
}

// bb20Click clicks, with the mouse, the element the expression find reads
// (wheeling it into view first).
func bb20Click(t *testing.T, ctx context.Context, what, find string) {
	t.Helper()
	bbkClickFound(t, ctx, what, find)
}

// bb20Type clicks a field and types text into it, key by key.
func bb20Type(t *testing.T, ctx context.Context, sel, text string) {
	t.Helper()
	bbkClickFound(t, ctx, sel, fmt.Sprintf(`document.querySelector(%q)`, sel))
	do(t, ctx, chromedp.KeyEvent(text))
}

// bb20Insert inserts text at the caret as a paste or an input method does
// (one input event, not key by key).
func bb20Insert(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		t.Fatalf("inserting %d bytes of text: %v", len(text), err)
	}
}

// bb20SelectAll selects a field's whole text with the keyboard.
func bb20SelectAll(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
}

// bb20Dialogs records the JavaScript dialogs (alert, confirm, prompt) the
// tab opens, and dismisses them so the page goes on.
type bb20Dialogs struct {
	mu   sync.Mutex
	msgs []string
}

func bb20WatchDialogs(t *testing.T, ctx context.Context) *bb20Dialogs {
	t.Helper()
	d := &bb20Dialogs{}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			d.mu.Lock()
			d.msgs = append(d.msgs, string(e.Type)+": "+e.Message)
			d.mu.Unlock()
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.Enable, page.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *bb20Dialogs) seen() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.msgs...)
}

// bb20API is an HTTP client signed in as an admin, for the API reads that
// check what the page shows (and the refusals it should relay).
type bb20API struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func bb20AdminAPI(t *testing.T, m *cli.Main, d *demo.Result) *bb20API {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	a := &bb20API{t: t, base: m.URL(), hc: &http.Client{Jar: jar}}
	code, body := a.call(http.MethodPost, "/api/session", map[string]string{"email": d.Admins[0].Email, "password": d.Admins[0].Password})
	if code != http.StatusOK {
		t.Fatalf("signing in over HTTP: %d %s", code, body)
	}
	return a
}

func (a *bb20API) call(method, path string, in any) (int, []byte) {
	a.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.base+path, body)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Origin", a.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (a *bb20API) get(path string, v any) {
	a.t.Helper()
	code, b := a.call(http.MethodGet, path, nil)
	if code != http.StatusOK {
		a.t.Fatalf("GET %s: %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		a.t.Fatalf("GET %s answered %s: %v", path, b, err)
	}
}

// bb20Problem is the part of a problem+json the page should relay.
type bb20Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Param  string `json:"param"`
}

// bb20Bundle is a bundle as the API answers it.
type bb20Bundle struct {
	Number       int    `json:"number"`
	Version      string `json:"version"`
	VersionName  string `json:"versionName"`
	SHA256       string `json:"sha256"`
	Current      bool   `json:"current"`
	ReleaseNotes string `json:"releaseNotes"`
	RollbackOf   int    `json:"rollbackOf"`
}

func (a *bb20API) bundles(extID int64) []bb20Bundle {
	a.t.Helper()
	var bs []bb20Bundle
	a.get(fmt.Sprintf("/api/extensions/%d/bundles?page=0", extID), &bs)
	return bs
}

// bb20Submit publishes a zip of name and version with notes through the
// three calls of the submit flow, as a pipeline does, with key.
func bb20Submit(t *testing.T, base string, extID int64, key, version, notes string) bb20Bundle {
	t.Helper()
	zip := extensionZip(t, map[string]string{
		"manifest.json": fmt.Sprintf(`{"manifest_version": 3, "name": "Tab Tamer", "version": %q}`, version),
		"background.js": "console.log(" + strconv.Quote(version) + ")\n",
	})
	keyObj := map[string]any{"extensionId": strconv.FormatInt(extID, 10), "apiKey": key}
	first := map[string]any{"extensionId": keyObj["extensionId"], "apiKey": key}
	if notes != "" {
		first["releaseNotes"] = notes
	}
	post := func(path string, in any) []byte {
		t.Helper()
		b, _ := json.Marshal(in)
		resp, err := http.Post(base+path, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rb, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, rb)
		}
		return rb
	}
	var up struct {
		URL string `json:"url"`
	}
	json.Unmarshal(post("/api/submit/upload", first), &up)
	req, _ := http.NewRequest(http.MethodPut, up.URL, bytes.NewReader(zip))
	req.Header.Set("Content-Type", "application/zip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT the zip: %d", resp.StatusCode)
	}
	var b bb20Bundle
	if err := json.Unmarshal(post("/api/submit/sign", keyObj), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// bb20Visible is a JavaScript test that the element sel is shown.
func bb20Visible(sel string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.checkVisibility(); })()`, sel)
}

// ---------------------------------------------------------------- webhooks

// TestBB20WebhooksSettings: an admin adds a webhook on the settings page by
// typing its URL and pressing Enter; its secret is shown once and is gone
// after a reload; a bad URL shows the server's problem by the field and
// adds nothing; "Send test event" makes a delivered row appear with the
// receiver's answer; a receiver that fails shows its status and answer;
// delete asks first.
func TestBB20WebhooksSettings(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		hits["ok "+r.Header.Get("Betaport-Event")]++
		mu.Unlock()
		io.WriteString(w, "receiver-says-thanks")
	}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		hits["bad "+r.Header.Get("Betaport-Event")]++
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "receiver-is-broken")
	}))
	defer bad.Close()

	m, d := startWebhookService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	ctx := adminTab(t, m, d)
	settings := fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID)
	hooksPath := fmt.Sprintf("/api/extensions/%d/webhooks", ext.ID)
	openApp(t, ctx, settings)
	bb20Wait(t, ctx, bb20Visible("#webhooks-empty"), "the settings page never said there are no webhooks")

	// A bad URL, typed and sent with Enter: the server's own problem shows
	// by the field, the field keeps what was typed, nothing is added.
	_, raw := api.call(http.MethodPost, hooksPath, map[string]string{"url": "ftp://x"})
	var prob bb20Problem
	json.Unmarshal(raw, &prob)
	if prob.Param != "url" || prob.Detail == "" {
		t.Fatalf("POST webhooks ftp://x answered %s, want a problem about url", raw)
	}
	bb20Type(t, ctx, "#webhook-url", "ftp://x")
	bbPress(t, ctx, kb.Enter)
	bb20Wait(t, ctx, bb20Visible("#webhook-error")+` && document.querySelector("#webhook-error").textContent.trim() !== ""`,
		"a refused URL showed no error")
	shown := evalJS[string](t, ctx, `document.querySelector("#webhook-error").textContent`)
	if !strings.Contains(shown, prob.Detail) {
		t.Errorf("the error by the field reads %q, want the server's detail %q", shown, prob.Detail)
	}
	// Next to the field: right under (or beside) it, not at the page's top.
	gap := evalJS[float64](t, ctx, `(() => { const f = document.querySelector("#webhook-url").getBoundingClientRect(),
		e = document.querySelector("#webhook-error").getBoundingClientRect(); return Math.max(e.top - f.bottom, f.top - e.bottom); })()`)
	if gap > 80 {
		t.Errorf("the error shows %v px away from the URL field", gap)
	}
	if v := evalJS[string](t, ctx, `document.querySelector("#webhook-url").value`); v != "ftp://x" {
		t.Errorf("after the refusal the field holds %q, want what was typed", v)
	}
	if inv := evalJS[string](t, ctx, `(document.querySelector("#webhook-url").getAttribute("aria-invalid") || "") + "|" + (document.querySelector("#webhook-url").getAttribute("aria-describedby") || "")`); !strings.Contains(inv, "true") && !strings.Contains(inv, "webhook-error") {
		t.Errorf("the URL field is not tied to its error for a screen reader (aria-invalid|aria-describedby = %q)", inv)
	}
	var list struct {
		Data []struct {
			ID  json.RawMessage `json:"id"`
			URL string          `json:"url"`
		} `json:"data"`
	}
	api.get(hooksPath, &list)
	if len(list.Data) != 0 {
		t.Fatalf("a refused URL added webhooks: %+v", list.Data)
	}

	// A good one: select what is there, type over it, Enter. The secret
	// shows once; the error goes.
	url := ok.URL + "/hook"
	bb20Click(t, ctx, "the URL field", `document.querySelector("#webhook-url")`)
	bb20SelectAll(t, ctx)
	do(t, ctx, chromedp.KeyEvent(url))
	bbPress(t, ctx, kb.Enter)
	bb20Wait(t, ctx, `document.querySelector("#webhook-secret")?.value.startsWith("whsec_") && `+bb20Visible("#webhook-secret"),
		"adding a webhook showed no secret")
	secret := evalJS[string](t, ctx, `document.querySelector("#webhook-secret").value`)
	if evalJS[bool](t, ctx, bb20Visible("#webhook-error")) {
		t.Errorf("after a good URL the old error still shows: %q", evalJS[string](t, ctx, `document.querySelector("#webhook-error").textContent`))
	}
	bb20Wait(t, ctx, fmt.Sprintf(`[...document.querySelectorAll("[data-webhook]")].some(r => r.innerText.includes(%q))`, url), "the new webhook never showed in the list")
	api.get(hooksPath, &list)
	if len(list.Data) != 1 || list.Data[0].URL != url {
		t.Fatalf("the API lists %+v, want the one webhook %s", list.Data, url)
	}

	// The secret is shown once: after a reload it is nowhere on the page.
	openApp(t, ctx, settings)
	bb20Wait(t, ctx, `!!document.querySelector("[data-webhook]")`, "after a reload the webhook never showed")
	if evalJS[bool](t, ctx, fmt.Sprintf(`document.documentElement.outerHTML.includes(%q) || [...document.querySelectorAll("input")].some(i => i.value.includes(%q))`, secret, secret)) {
		t.Errorf("after a reload the page still holds the webhook's secret")
	}
	if evalJS[bool](t, ctx, bb20Visible("#webhook-secret")) {
		t.Errorf("after a reload the secret box still shows (value %q)", evalJS[string](t, ctx, `document.querySelector("#webhook-secret").value`))
	}

	// Send test event: a delivered row appears, with the status and the
	// receiver's answer.
	bb20Click(t, ctx, "Send test event", `document.querySelector("[data-webhook] .test-webhook")`)
	bb20Wait(t, ctx, `[...document.querySelectorAll('[data-webhook] .delivery')].some(r => r.dataset.state === "delivered" || /delivered/i.test(r.innerText))`,
		"Send test event showed no delivered row")
	row := evalJS[string](t, ctx, `[...document.querySelectorAll('[data-webhook] .delivery')][0].innerText`)
	for _, want := range []string{"ping", "200"} {
		if !strings.Contains(row, want) {
			t.Errorf("the delivery row reads %q, want it to say %q", row, want)
		}
	}
	// "their answers": the receiver's body is on the page, by the row.
	var hooks struct {
		Data []struct {
			ID json.RawMessage `json:"id"`
		} `json:"data"`
	}
	api.get(hooksPath, &hooks)
	var dels struct {
		Data []struct {
			Response string `json:"response"`
		} `json:"data"`
	}
	api.get(fmt.Sprintf("%s/%s/deliveries", hooksPath, strings.Trim(string(hooks.Data[0].ID), `"`)), &dels)
	if len(dels.Data) != 1 || dels.Data[0].Response != "receiver-says-thanks" {
		t.Errorf("the API's deliveries are %+v, want the ping with the receiver's answer", dels.Data)
	}
	if !evalJS[bool](t, ctx, `document.querySelector("[data-webhook]").outerHTML.includes("receiver-says-thanks")`) {
		t.Errorf("the delivery does not show the receiver's answer (its body, which the API holds as response): %s", evalJS[string](t, ctx, `document.querySelector("[data-webhook] .delivery").outerHTML`))
	}
	mu.Lock()
	if hits["ok ping"] != 1 {
		t.Errorf("the receiver got %d pings, want 1", hits["ok ping"])
	}
	mu.Unlock()

	// A second webhook whose receiver fails: its row says so with the
	// status and the answer, and the first webhook is untouched.
	bb20Type(t, ctx, "#webhook-url", bad.URL+"/broken")
	bbPress(t, ctx, kb.Enter)
	bb20Wait(t, ctx, `document.querySelectorAll("[data-webhook]").length === 2`, "the second webhook never showed")
	badRow := fmt.Sprintf(`[...document.querySelectorAll("[data-webhook]")].find(r => r.innerText.includes(%q))`, bad.URL)
	bb20Click(t, ctx, "Send test event of the failing webhook", badRow+`.querySelector(".test-webhook")`)
	bb20Wait(t, ctx, badRow+`.innerText.includes("500")`, "the failing receiver's 500 never showed on its webhook")
	if txt := evalJS[string](t, ctx, badRow+`.innerText`); strings.Contains(txt, "delivered") && !strings.Contains(txt, "pending") && !strings.Contains(txt, "fail") && !strings.Contains(txt, "retry") {
		t.Errorf("a delivery answered 500 reads as delivered: %q", txt)
	}
	if !evalJS[bool](t, ctx, badRow+`.outerHTML.includes("receiver-is-broken")`) {
		t.Errorf("the failing delivery does not show the receiver's answer: %s", evalJS[string](t, ctx, badRow+`.querySelector(".delivery").outerHTML`))
	}

	// Delete asks first: Cancel keeps the webhook, the confirmation
	// deletes it (and only it).
	goodRow := fmt.Sprintf(`[...document.querySelectorAll("[data-webhook]")].find(r => r.innerText.includes(%q))`, ok.URL)
	bb20Click(t, ctx, "Delete", goodRow+`.querySelector(".delete-webhook")`)
	bb20Wait(t, ctx, `!!document.querySelector("[data-webhook] .confirm-delete")`, "Delete asked nothing")
	api.get(hooksPath, &list)
	if len(list.Data) != 2 {
		t.Fatalf("pressing Delete (before confirming) left %d webhooks", len(list.Data))
	}
	bb20Click(t, ctx, "Cancel", `document.querySelector("[data-webhook] .cancel-delete")`)
	bb20Wait(t, ctx, `!document.querySelector("[data-webhook] .confirm-delete")`, "Cancel did not close the question")
	api.get(hooksPath, &list)
	if len(list.Data) != 2 {
		t.Fatalf("Cancel deleted: %d webhooks left", len(list.Data))
	}
	bb20Click(t, ctx, "Delete", goodRow+`.querySelector(".delete-webhook")`)
	bb20Click(t, ctx, "the confirmation", `document.querySelector("[data-webhook] .confirm-delete")`)
	bb20Wait(t, ctx, `document.querySelectorAll("[data-webhook]").length === 1`, "the deleted webhook stayed in the list")
	api.get(hooksPath, &list)
	if len(list.Data) != 1 || list.Data[0].URL != bad.URL+"/broken" {
		t.Fatalf("after deleting one, the API lists %+v", list.Data)
	}
}

// TestBB20WebhookDoubleAdd: a double click on "Add webhook" adds one
// webhook, not two with two secrets of which the page shows one.
func TestBB20WebhookDoubleAdd(t *testing.T) {
	m, d := startWebhookService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	bb20Wait(t, ctx, bb20Visible("#webhooks-empty"), "the settings page never said there are no webhooks")
	bb20Type(t, ctx, "#webhook-url", "https://ci.example.com/hook")
	at := evalJS[[]float64](t, ctx, `(() => { const r = document.querySelector("#add-webhook").getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`)
	do(t, ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, at[0], at[1]),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(2)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(2)))
	bb20Wait(t, ctx, `document.querySelector("#webhook-secret")?.value.startsWith("whsec_")`, "adding a webhook showed no secret")
	time.Sleep(time.Second) // a second request, if one was sent, lands
	var list struct {
		Data []json.RawMessage `json:"data"`
	}
	api.get(fmt.Sprintf("/api/extensions/%d/webhooks", ext.ID), &list)
	if len(list.Data) != 1 {
		t.Errorf("a double click on Add webhook added %d webhooks, want 1", len(list.Data))
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll("[data-webhook]").length`); n != len(list.Data) {
		t.Errorf("the page lists %d webhooks, the API %d", n, len(list.Data))
	}
}
