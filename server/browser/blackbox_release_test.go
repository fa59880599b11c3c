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

	"github.com/chromedp/cdproto/emulation"
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
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(30*time.Millisecond), chromedp.WithPollingTimeout(patient(d)))); err != nil {
		shown, err2 := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`location.pathname + "\n" + (document.querySelector("main")?.innerText ?? document.body.innerText)`))
		t.Fatalf("%s (waited %v for %s: %v); the page shows (%v):\n%s", msg, patient(d), expr, err, err2, shown)
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
	bbkClickIntoField(t, ctx, sel)
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
	t.Parallel()
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
	checkAccessible(t, ctx, "settings with a refused webhook URL")
	if v := evalJS[string](t, ctx, `document.querySelector("#webhook-url").value`); v != "ftp://x" {
		t.Errorf("after the refusal the field holds %q, want what was typed", v)
	}
	// A URL with a password in it: refused, said by the field.
	_, raw = api.call(http.MethodPost, hooksPath, map[string]string{"url": "https://user:pw@example.com/hook"})
	json.Unmarshal(raw, &prob)
	bb20Click(t, ctx, "the URL field", `document.querySelector("#webhook-url")`)
	bb20SelectAll(t, ctx)
	do(t, ctx, chromedp.KeyEvent("https://user:pw@example.com/hook"))
	bbPress(t, ctx, kb.Enter)
	bb20Wait(t, ctx, fmt.Sprintf(`document.querySelector("#webhook-error").checkVisibility() && document.querySelector("#webhook-error").textContent.includes(%q)`, prob.Detail),
		"a URL with user:password showed no error, or not the server's")
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
	bb20Click(t, ctx, "the confirmation", `document.querySelector('[data-webhook] .confirm-delete[aria-disabled="false"]')`)
	bb20Wait(t, ctx, `document.querySelectorAll("[data-webhook]").length === 1`, "the deleted webhook stayed in the list")
	api.get(hooksPath, &list)
	if len(list.Data) != 1 || list.Data[0].URL != bad.URL+"/broken" {
		t.Fatalf("after deleting one, the API lists %+v", list.Data)
	}
}

// TestBB20WebhookDoubleAdd: a double click on "Add webhook" adds one
// webhook, not two with two secrets of which the page shows one.
func TestBB20WebhookDoubleAdd(t *testing.T) {
	t.Parallel()
	m, d := startWebhookService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	bb20Wait(t, ctx, bb20Visible("#webhooks-empty"), "the settings page never said there are no webhooks")
	bb20Type(t, ctx, "#webhook-url", "https://ci.example.com/hook")
	hooks := trackRequests(t, ctx, fmt.Sprintf("/api/extensions/%d/webhooks", ext.ID))
	at := evalJS[[]float64](t, ctx, `(() => { const r = document.querySelector("#add-webhook").getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`)
	do(t, ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, at[0], at[1]),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(2)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(2)))
	bb20Wait(t, ctx, `document.querySelector("#webhook-secret")?.value.startsWith("whsec_")`, "adding a webhook showed no secret")
	bb20Wait(t, ctx, `document.querySelectorAll("[data-webhook]").length > 0`, "the new webhook never showed in the list")
	// A second request, if one was sent, has been answered.
	hooks.waitSettled(t, 300*time.Millisecond, patient(10*time.Second))
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

// ---------------------------------------------------------------- adoption

// bb20Check sends one update check to updateURL as Chromium's updater does
// (a plain GET, no cookie), reporting version v ("" reports none).
func bb20Check(t *testing.T, updateURL, chromeID, v string) {
	t.Helper()
	x := "id%3D" + chromeID
	if v != "" {
		x += "%26v%3D" + v
	}
	resp, err := http.Get(updateURL + "?x=" + x + "%26uc")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("update check from %q: %d", v, resp.StatusCode)
	}
}

// bb20Adoption is the extension page's Adoption section, read.
type bb20Adoption struct {
	Found   bool       `json:"found"`
	Text    string     `json:"text"`
	SVG     bool       `json:"svg"`
	SVGText string     `json:"svgText"`
	Rows    [][]string `json:"rows"`
}

// bb20ReadAdoption reads the section under the heading "Adoption": all its
// text, its chart's text, and the rows of its table.
func bb20ReadAdoption(t *testing.T, ctx context.Context) bb20Adoption {
	t.Helper()
	return evalJS[bb20Adoption](t, ctx, `(() => {
		const h = [...document.querySelectorAll("main h2, main h3")].find(h => h.textContent.trim().startsWith("Adoption"));
		if (!h) return {found: false, text: "", svg: false, svgText: "", rows: []};
		const sec = h.closest("section") || h.parentElement;
		const svg = sec.querySelector("svg");
		const rows = [...sec.querySelectorAll("table tr, [role=table] [role=row]")].map(r => [...r.querySelectorAll("th, td, [role=cell], [role=columnheader], [role=rowheader]")].map(c => c.textContent.trim()));
		return {found: true, text: sec.innerText, svg: !!svg, svgText: svg ? [...svg.querySelectorAll("text, title, desc")].map(e => e.textContent).join("|") : "", rows};
	})()`)
}

// TestBB20AdoptionChart: with no update checks the extension's Adoption
// tab says so under "Adoption"; after checks from several versions, sent over HTTP to
// the update URL, it shows a chart labelled by version, "N% on the current
// build" with N the share of the current version, and a table of the same
// numbers.
func TestBB20AdoptionChart(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	ctx := adminTab(t, m, d)
	page := fmt.Sprintf("%s/extensions/%d/adoption", m.URL(), ext.ID)

	// No checks yet: an empty state, no percentage made up from nothing.
	openApp(t, ctx, page)
	bb20Wait(t, ctx, `[...document.querySelectorAll("main h2, main h3")].some(h => h.textContent.trim().startsWith("Adoption"))`, `the extension page has no "Adoption" heading`)
	bb20Wait(t, ctx, `(() => { const h = [...document.querySelectorAll("main h2, main h3")].find(h => h.textContent.trim().startsWith("Adoption"));
		const s = h.closest("section") || h.parentElement; return !/loading/i.test(s.innerText) && s.innerText.trim() !== h.innerText.trim(); })()`, "the Adoption section never finished loading")
	empty := bb20ReadAdoption(t, ctx)
	if strings.Contains(empty.Text, "% on the current build") || strings.Contains(empty.Text, "NaN") {
		t.Errorf("with no update checks the Adoption section reads %q, want an empty state", empty.Text)
	}
	if !strings.Contains(strings.ToLower(empty.Text), "no ") {
		t.Errorf("with no update checks the Adoption section reads %q: no empty state", empty.Text)
	}

	// Checks: three from the current version, one from the one before,
	// one from a version never served ("other"), one with no version (not
	// counted).
	var upd struct {
		ChromeID  string `json:"chromeId"`
		UpdateURL string `json:"updateUrl"`
	}
	api.get(fmt.Sprintf("/api/extensions/%d/updates", ext.ID), &upd)
	if upd.UpdateURL == "" || upd.ChromeID == "" {
		t.Fatalf("GET updates answered %+v", upd)
	}
	bs := api.bundles(ext.ID)
	if len(bs) < 2 || !bs[0].Current {
		t.Fatalf("the bundles list is %+v, want the current on top of others", bs)
	}
	cur, prev := bs[0].Version, bs[1].Version
	for _, v := range []string{cur, cur, cur, prev, "0.0.0.7", ""} {
		bb20Check(t, upd.UpdateURL, upd.ChromeID, v)
	}
	// What the API counted is what the page must show.
	var ad struct {
		Data []struct {
			Hour    string `json:"hour"`
			Version string `json:"version"`
			Checks  int    `json:"checks"`
		} `json:"data"`
	}
	api.get(fmt.Sprintf("/api/extensions/%d/adoption?days=7", ext.ID), &ad)
	byVersion := map[string]int{}
	total := 0
	for _, r := range ad.Data {
		byVersion[r.Version] += r.Checks
		total += r.Checks
	}
	t.Logf("the API counted %v", byVersion)
	if byVersion[cur] != 3 || byVersion[prev] != 1 || byVersion["other"] != 1 || total != 5 {
		t.Errorf("the API counted %v, want %s:3 %s:1 other:1", byVersion, cur, prev)
	}
	want := (100*byVersion[cur] + total/2) / total

	openApp(t, ctx, page)
	bb20Wait(t, ctx, `(() => { const h = [...document.querySelectorAll("main h2, main h3")].find(h => h.textContent.trim().startsWith("Adoption"));
		return !!h && (h.closest("section") || h.parentElement).innerText.includes("% on the current build"); })()`, `after update checks the page never said "N% on the current build"`)
	got := bb20ReadAdoption(t, ctx)
	if !strings.Contains(got.Text, fmt.Sprintf("%d%% on the current build", want)) {
		t.Errorf("the Adoption section reads %q, want \"%d%% on the current build\"", got.Text, want)
	}
	// The chart: an SVG labelled with each version in text, not colour alone.
	if !got.SVG {
		t.Fatalf("the Adoption section has no SVG chart: %q", got.Text)
	}
	for _, v := range []string{cur, prev, "other"} {
		if !strings.Contains(got.SVGText, v) {
			t.Errorf("the chart's text (%q) does not name version %q: it is told apart by colour alone", got.SVGText, v)
		}
	}
	// Over the last 7 days: the chart names each of them, today last.
	days := evalJS[[]string](t, ctx, `(() => { const h = [...document.querySelectorAll("main h2, main h3")].find(h => h.textContent.trim().startsWith("Adoption"));
		const svg = (h.closest("section") || h.parentElement).querySelector("svg");
		return [...svg.querySelectorAll("text")].map(e => e.textContent.trim()).filter(s => /^[A-Z][a-z]{2} \d{1,2}$|^\d{4}-\d\d-\d\d$/.test(s)); })()`)
	if len(days) != 7 || (days[6] != time.Now().UTC().Format("Jan 2") && days[6] != today0()) {
		t.Errorf("the chart's days are %v, want the last 7 ending today", days)
	}
	// The table: a row per (day, version) with the same checks, and the
	// share; today's row of the current version says 60%.
	today := time.Now().UTC().Format("2006-01-02")
	t.Logf("the table: %v", got.Rows)
	seen := map[string]bool{}
	for _, r := range got.Rows {
		line := strings.Join(r, " | ")
		for v, n := range byVersion {
			if len(r) >= 3 && slicesContains(r, v) {
				seen[v] = true
				if !slicesContains(r, strconv.Itoa(n)) {
					t.Errorf("the table's row for %s reads %q, want %d checks", v, line, n)
				}
				if v == cur && !strings.Contains(line, fmt.Sprintf("%d%%", want)) {
					t.Errorf("the table's row for the current version reads %q, want a share of %d%%", line, want)
				}
				if !strings.Contains(line, today) && !strings.Contains(line, time.Now().UTC().Format("Jan 2")) && !strings.Contains(line, time.Now().UTC().Format("2 Jan")) {
					t.Errorf("the table's row for %s reads %q: which day?", v, line)
				}
			}
		}
	}
	for v := range byVersion {
		if !seen[v] {
			t.Errorf("the table has no row for version %q: %v", v, got.Rows)
		}
	}
	checkAccessible(t, ctx, "extension page with adoption")
}

func today0() string { return time.Now().UTC().Format("2006-01-02") }

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------- release notes

// bb20NotesBox is the upload panel's notes box.
const bb20NotesBox = `document.querySelector("#upload-panel textarea")`

// bb20Zip is a small extension zip of version v.
func bb20Zip(t *testing.T, v string) pageFile {
	return pageFile{Name: "tab-tamer-" + v + ".zip", Type: "application/zip", Data: extensionZip(t, map[string]string{
		"manifest.json": fmt.Sprintf(`{"manifest_version": 3, "name": "Tab Tamer", "version": %q}`, v),
		"background.js": "console.log(" + strconv.Quote(v) + ")\n",
	})}
}

// TestBB20NotesPublishedAndShownToTesters: an admin types notes with a
// list, a link and an HTML tag into the upload panel and drops a zip; a
// tester opening their invite link sees the notes on the builds page, the
// list as a list, the link opening a new tab without the opener, the tag
// as text; no script runs. The row's notes open and close from the
// keyboard with aria-expanded following.
func TestBB20NotesPublishedAndShownToTesters(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	ctx := adminTab(t, m, d)
	dialogs := bb20WatchDialogs(t, ctx)
	openUploadPanel(t, ctx, m.URL(), ext.ID)
	bb20Wait(t, ctx, bb20NotesBox+` !== null`, "the upload panel has no notes box")
	if lbl := evalJS[string](t, ctx, `(() => { const b = `+bb20NotesBox+`; return (b.labels && b.labels[0] ? b.labels[0].textContent : "") + (b.getAttribute("aria-label") || ""); })()`); strings.TrimSpace(lbl) == "" {
		t.Errorf("the notes box has no label")
	}

	notes := "Faster tabs.\n\n- one\n- two with [the site](https://example.com/x)\n\n<img src=x onerror=alert(1)> [bad](javascript:alert(2)) [<b>bold</b>](https://example.com/b)"
	bb20Click(t, ctx, "the notes box", bb20NotesBox)
	do(t, ctx, chromedp.KeyEvent(notes))
	if got := evalJS[string](t, ctx, bb20NotesBox+`.value`); got != notes {
		t.Fatalf("the notes box holds %q after typing, want %q", got, notes)
	}
	dropFiles(t, ctx, bb20Zip(t, "9.2.0"))
	bb20Wait(t, ctx, `document.querySelector("#upload-result") !== null`, "the dropped zip was never published")
	bs := api.bundles(ext.ID)
	if bs[0].Version != "9.2.0" || bs[0].ReleaseNotes != notes {
		t.Fatalf("the published bundle is %+v, want 9.2.0 with the notes typed", bs[0])
	}
	n := bs[0].Number

	// The admin's bundles list shows them on the new bundle's row.
	adminRow := fmt.Sprintf(`document.querySelector('#bundle-rows [data-bundle="%d"]')`, n)
	bb20Wait(t, ctx, adminRow+` !== null`, "the new bundle never showed in the admin's list")
	bb20Wait(t, ctx, `(() => { const r = `+adminRow+`; return r.textContent.includes("Faster tabs") || !!r.querySelector("[aria-expanded]"); })()`,
		"the admin's bundles list shows nothing of the notes on the new bundle")
	// After the panel, no script ran in the admin's page either.
	if s := dialogs.seen(); len(s) > 0 {
		t.Fatalf("the admin's page opened dialogs: %v", s)
	}

	// The tester.
	tester := bbkPrivateTab(t)
	tdialogs := bb20WatchDialogs(t, tester)
	openApp(t, tester, m.URL()+d.TesterLink)
	bb20Wait(t, tester, fmt.Sprintf(`[...document.querySelectorAll("#builds [data-build]")].some(r => r.textContent.includes("#%d"))`, n), "the tester's builds never showed the new bundle")
	// The current build's notes show on the page, as Markdown made safe.
	bb20Wait(t, tester, `[...document.querySelectorAll("main ul li")].some(li => li.textContent.trim() === "one" && li.checkVisibility())`,
		"the tester's builds page never showed the current build's notes as a list (without opening anything)")
	if evalJS[bool](t, tester, `[...document.querySelectorAll("a")].some(a => /^\s*(javascript|data):/i.test(a.getAttribute("href") || ""))`) {
		t.Errorf("a javascript: link in the notes became a link")
	}
	if !evalJS[bool](t, tester, `document.querySelector("main").innerText.includes("[bad](javascript:alert(2))")`) {
		t.Errorf("a javascript: link in the notes is not shown as the text written: %q", evalJS[string](t, tester, `document.querySelector("main").innerText`))
	}
	if evalJS[bool](t, tester, `!!document.querySelector("main b")`) || !evalJS[bool](t, tester, `[...document.querySelectorAll("main a")].some(a => a.textContent === "<b>bold</b>")`) {
		t.Errorf("HTML in a link's text: want the link with the text as written, got %q", evalJS[string](t, tester, `[...document.querySelectorAll("main a")].map(a => a.outerHTML).join(" ")`))
	}
	type link struct {
		Href, Rel, Target, Text string
	}
	links := evalJS[[]link](t, tester, `[...document.querySelectorAll("main a")].filter(a => a.textContent.trim() === "the site").map(a => ({Href: a.href, Rel: a.rel, Target: a.target, Text: a.textContent}))`)
	if len(links) == 0 {
		t.Fatalf("the notes' link is not a link: %q", evalJS[string](t, tester, `document.querySelector("main").innerText`))
	}
	for _, l := range links {
		if l.Href != "https://example.com/x" || !strings.Contains(l.Rel, "noopener") || l.Target != "_blank" {
			t.Errorf("the notes' link is %+v, want https://example.com/x, rel noopener, target _blank", l)
		}
	}
	if !evalJS[bool](t, tester, `document.querySelector("main").innerText.includes("<img src=x onerror=alert(1)>")`) {
		t.Errorf("the HTML in the notes is not shown as text: %q", evalJS[string](t, tester, `document.querySelector("main").innerText`))
	}
	if evalJS[bool](t, tester, `[...document.querySelectorAll("img")].some(i => i.getAttribute("src") === "x") || !!document.querySelector("[onerror]")`) {
		t.Errorf("the notes' HTML became an element")
	}
	bbFrames(t, tester)

	// Each row's notes: Tab to the row's toggle, Enter opens, Space closes.
	openApp(t, tester, m.URL()+"/builds")
	bb20Wait(t, tester, fmt.Sprintf(`!!document.querySelector('#builds [data-build] [aria-expanded]') && [...document.querySelectorAll("#builds [data-build]")].some(r => r.textContent.includes("#%d"))`, n),
		"no row of the builds list has a toggle (aria-expanded) for its notes")
	var onToggle bool
	for i := 0; i < 60 && !onToggle; i++ {
		bbPress(t, tester, kb.Tab)
		onToggle = evalJS[bool](t, tester, fmt.Sprintf(`(() => { const e = document.activeElement; const r = e.closest("[data-build]");
			return e.hasAttribute("aria-expanded") && !!r && r.textContent.includes("#%d"); })()`, n))
	}
	if !onToggle {
		t.Fatalf("Tab never reached the notes toggle of bundle #%d's row (focus on %v)", n, focused(t, tester))
	}
	expanded := func() string {
		return evalJS[string](t, tester, `document.activeElement.getAttribute("aria-expanded")`)
	}
	notesShown := `(() => { const e = document.activeElement; const id = e.getAttribute("aria-controls");
		const p = id ? document.getElementById(id) : e.closest("[data-build]").parentElement;
		return !!p && p.checkVisibility() && p.innerText.includes("Faster tabs"); })()`
	if expanded() != "false" {
		t.Errorf("the toggle starts with aria-expanded=%q, want false", expanded())
	}
	bbPress(t, tester, kb.Enter)
	bb20Wait(t, tester, `document.activeElement.getAttribute("aria-expanded") === "true"`, "Enter on the toggle did not open the notes (aria-expanded)")
	bb20Wait(t, tester, notesShown, "with aria-expanded=true the row's notes do not show")
	bbPress(t, tester, " ")
	bb20Wait(t, tester, `document.activeElement.getAttribute("aria-expanded") === "false"`, "Space on the toggle did not close the notes (aria-expanded), or the toggle lost focus")
	if evalJS[bool](t, tester, `(() => { const e = document.activeElement; const id = e.getAttribute("aria-controls"); const p = id && document.getElementById(id); return !!p && p.checkVisibility(); })()`) {
		t.Errorf("with aria-expanded=false the row's notes still show")
	}
	bbPress(t, tester, " ")
	bb20Wait(t, tester, `document.activeElement.getAttribute("aria-expanded") === "true"`, "Space on the toggle did not open the notes again")
	if s := tdialogs.seen(); len(s) > 0 {
		t.Fatalf("the tester's page opened dialogs: %v", s)
	}
	checkAccessible(t, tester, "builds with a row's notes open")
}

// TestBB20NotesTooLong: notes over 10 KiB (in UTF-8 bytes: 6,000 "é" are
// 12,000 bytes) pasted into the panel are refused before anything is
// uploaded, saying why; cut back under the limit, the same drop publishes
// them.
func TestBB20NotesTooLong(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)
	bb20Wait(t, ctx, bb20NotesBox+` !== null`, "the upload panel has no notes box")
	before := api.bundles(ext.ID)[0].Number
	tr := trackRequests(t, ctx, "/api/submit/")

	bb20Click(t, ctx, "the notes box", bb20NotesBox)
	bb20Insert(t, ctx, strings.Repeat("é", 6000))
	if got := evalJS[int](t, ctx, bb20NotesBox+`.value.length`); got != 6000 {
		// A maxlength counts UTF-16 units: it would let 6,000 é through.
		t.Logf("the box took %d of the 6,000 characters pasted", got)
	}
	dropFiles(t, ctx, bb20Zip(t, "9.3.0"))
	bb20Wait(t, ctx, `/10\s?KiB|10,?240|too long|bytes/i.test(document.querySelector("#upload-panel").innerText)`,
		"notes of 12,000 bytes: the panel never said they are too long")
	// The panel has taken the zip in (it names it), and a submit call, if
	// one was made, has been answered.
	bb20Wait(t, ctx, `document.querySelector("#upload-panel").innerText.includes("tab-tamer-9.3.0.zip")`, "the panel never showed the dropped zip")
	bbFrames(t, ctx)
	tr.waitSettled(t, 300*time.Millisecond, patient(10*time.Second))
	if s, _ := tr.counts(); s != 0 {
		t.Errorf("notes over 10 KiB: the panel still made %d submit calls: %v", s, tr.since(0))
	}
	if n := api.bundles(ext.ID)[0].Number; n != before {
		t.Fatalf("notes over 10 KiB published bundle #%d", n)
	}
	said := evalJS[string](t, ctx, `document.querySelector("#upload-panel").innerText`)
	t.Logf("the panel says: %q", said)

	// Cut back to 5,120 é (10,240 bytes, the limit exactly): the same zip goes.
	bb20Click(t, ctx, "the notes box", bb20NotesBox)
	bb20SelectAll(t, ctx)
	short := strings.Repeat("é", 5120)
	bb20Insert(t, ctx, short)
	dropFiles(t, ctx, bb20Zip(t, "9.3.0"))
	bb20Wait(t, ctx, `document.querySelector("#upload-result") !== null`, "notes under the limit: the zip was never published")
	b := api.bundles(ext.ID)[0]
	if b.Number == before || b.ReleaseNotes != short {
		t.Fatalf("after cutting the notes back the top bundle is #%d with %d bytes of notes, want a new one with the 10,240 bytes", b.Number, len(b.ReleaseNotes))
	}
}

// ---------------------------------------------------------------- rollback

// bb20RollbackButton finds the button "Roll back to #n".
func bb20RollbackButton(n int) string {
	return fmt.Sprintf(`[...document.querySelectorAll("main button")].find(b => b.checkVisibility() && b.textContent.trim() === "Roll back to #%d")`, n)
}

// bb20ConfirmButton finds the visible button that confirms a rollback: the
// one in the question that opened, whose words say roll back, not the
// button that asked.
const bb20ConfirmButton = `[...document.querySelectorAll("main button")].find(b => b.checkVisibility() && b.getAttribute("aria-disabled") !== "true" && /roll/i.test(b.textContent) && !/^Roll back to #\d+$/.test(b.textContent.trim()))`

// bb20CancelButton finds the visible Cancel (or Keep) of that question.
const bb20CancelButton = `[...document.querySelectorAll("main button")].find(b => b.checkVisibility() && /^(cancel|keep|no)\b/i.test(b.textContent.trim()))`

// TestBB20Rollback: an admin presses "Roll back to #A" and cancels:
// nothing changes. Pressed again and confirmed: the list's top row says
// "rollback of #A", the header and the current badge move to it, in this
// tab and in a second one open on the page, without a reload. A double
// click on the confirmation of another rollback publishes one bundle.
func TestBB20Rollback(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	key := setKey(t, m.Store, ext.ID)
	a := bb20Submit(t, m.URL(), ext.ID, key, "9.0.0", "notes of A")
	b := bb20Submit(t, m.URL(), ext.ID, key, "9.1.0", "")
	ctx := adminTab(t, m, d)
	dialogs := bb20WatchDialogs(t, ctx)
	other := newTab(t)
	page := fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID)
	openApp(t, ctx, page)
	openApp(t, other, page)
	for _, c := range []context.Context{ctx, other} {
		bb20Wait(t, c, fmt.Sprintf(`!!document.querySelector('#bundle-rows [data-bundle="%d"]')`, a.Number), "the bundles list never showed")
	}
	if evalJS[bool](t, ctx, fmt.Sprintf(`!!document.querySelector('#bundle-rows [data-bundle="%d"]') && [...document.querySelector('#bundle-rows [data-bundle="%d"]').querySelectorAll("button")].some(b => b.checkVisibility() && /roll back/i.test(b.textContent))`, b.Number, b.Number)) {
		t.Errorf("the current bundle's row offers to roll back to itself")
	}
	bb20Wait(t, ctx, bb20RollbackButton(a.Number)+` !== undefined`, fmt.Sprintf(`no "Roll back to #%d" button`, a.Number))

	// Press, then cancel: nothing changes.
	bb20Click(t, ctx, "Roll back to #A", bb20RollbackButton(a.Number))
	bb20Wait(t, ctx, bb20CancelButton+` !== undefined && `+bb20ConfirmButton+` !== undefined`, "pressing Roll back asked nothing (no confirm and cancel)")
	checkAccessible(t, ctx, "bundles with the rollback question open")
	if n := len(api.bundles(ext.ID)); api.bundles(ext.ID)[0].Number != b.Number {
		t.Fatalf("pressing Roll back, before confirming, published (%d bundles)", n)
	}
	bb20Click(t, ctx, "Cancel", bb20CancelButton)
	bb20Wait(t, ctx, bb20ConfirmButton+` === undefined`, "Cancel left the question open")
	if top := api.bundles(ext.ID)[0]; top.Number != b.Number {
		t.Fatalf("Cancel rolled back: the top bundle is %+v", top)
	}
	if got := text(t, ctx, "#current-bundle"); got != fmt.Sprintf("#%d", b.Number) {
		t.Errorf("after Cancel the header says %q", got)
	}

	// Press again and confirm.
	bb20Click(t, ctx, "Roll back to #A", bb20RollbackButton(a.Number))
	bb20Click(t, ctx, "the confirmation", bb20ConfirmButton)
	want := b.Number + 1
	for i, c := range []context.Context{ctx, other} {
		bb20Wait(t, c, fmt.Sprintf(`document.querySelector("#bundle-rows [data-bundle]")?.dataset.bundle === "%d"`, want),
			fmt.Sprintf("tab %d: the rollback's bundle #%d never came on top of the list", i+1, want))
		top := evalJS[string](t, c, `document.querySelector("#bundle-rows [data-bundle]").innerText`)
		if !strings.Contains(top, fmt.Sprintf("rollback of #%d", a.Number)) {
			t.Errorf("tab %d: the top row reads %q, want \"rollback of #%d\"", i+1, top, a.Number)
		}
		if !strings.Contains(top, "9.0.0") {
			t.Errorf("tab %d: the rollback's row reads %q, want the version it serves again, 9.0.0", i+1, top)
		}
		bb20Wait(t, c, fmt.Sprintf(`document.querySelector("#current-bundle").textContent.trim() === "#%d"`, want), fmt.Sprintf("tab %d: the header never moved to #%d", i+1, want))
		cur := evalJS[[]string](t, c, `[...document.querySelectorAll("#bundle-rows [data-bundle]")].filter(r => [...r.querySelectorAll(".badge")].some(b => b.textContent.includes("current"))).map(r => r.dataset.bundle)`)
		if len(cur) != 1 || cur[0] != strconv.Itoa(want) {
			t.Errorf("tab %d: rows marked current: %v, want only #%d", i+1, cur, want)
		}
	}
	bs := api.bundles(ext.ID)
	if bs[0].Number != want || bs[0].RollbackOf != a.Number || !bs[0].Current || bs[0].SHA256 != a.SHA256 || bs[0].ReleaseNotes != a.ReleaseNotes {
		t.Fatalf("the API's top bundle is %+v, want #%d, a rollback of #%d with its zip and notes", bs[0], want, a.Number)
	}

	// A double click on the confirmation of "Roll back to #B" publishes one.
	bb20Wait(t, ctx, bb20RollbackButton(b.Number)+` !== undefined`, fmt.Sprintf(`no "Roll back to #%d" button after the first rollback`, b.Number))
	bb20Click(t, ctx, "Roll back to #B", bb20RollbackButton(b.Number))
	bb20Wait(t, ctx, bb20ConfirmButton+` !== undefined`, "the second rollback asked nothing")
	rollbacks := trackRequests(t, ctx, "/rollback")
	at := evalJS[[]float64](t, ctx, `(() => { const r = (`+bb20ConfirmButton+`).getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`)
	do(t, ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, at[0], at[1]),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(2)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(2)))
	bb20Wait(t, ctx, fmt.Sprintf(`document.querySelector("#current-bundle").textContent.trim() === "#%d"`, want+1), "the second rollback never became current")
	// A second publish, if one was sent, has been answered.
	rollbacks.waitSettled(t, 300*time.Millisecond, patient(10*time.Second))
	bs = api.bundles(ext.ID)
	if bs[0].Number != want+1 || bs[0].RollbackOf != b.Number || bs[1].Number != want {
		t.Errorf("after a double click on the confirmation the newest bundles are #%d (rollback of %d), #%d: want one rollback, #%d", bs[0].Number, bs[0].RollbackOf, bs[1].Number, want+1)
	}
	if n := evalJS[int](t, ctx, fmt.Sprintf(`document.querySelectorAll('#bundle-rows [data-bundle="%d"]').length`, want+1)); n != 1 {
		t.Errorf("the list shows bundle #%d %d times", want+1, n)
	}
	if s := dialogs.seen(); len(s) > 0 {
		t.Errorf("the rollback used browser dialogs (%v), not the page's own question", s)
	}
	checkAccessible(t, ctx, "bundles after a rollback")
}

// TestBB20AdoptionDaysAreUTCEverywhere: the table says its days are UTC
// days; an admin in Los Angeles, where it may be yesterday, sees today's
// UTC checks under today's UTC date, and the same share.
func TestBB20AdoptionDaysAreUTCEverywhere(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	var upd struct {
		ChromeID  string `json:"chromeId"`
		UpdateURL string `json:"updateUrl"`
	}
	api.get(fmt.Sprintf("/api/extensions/%d/updates", ext.ID), &upd)
	cur := api.bundles(ext.ID)[0].Version
	bb20Check(t, upd.UpdateURL, upd.ChromeID, cur)
	bb20Check(t, upd.UpdateURL, upd.ChromeID, "0.0.1")
	for _, zone := range []string{"America/Los_Angeles", "Pacific/Kiritimati"} {
		t.Run(zone, func(t *testing.T) {
			ctx := newTab(t)
			if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone}); err != nil {
				t.Fatal(err)
			}
			signIn(t, ctx, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
			openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/adoption", m.URL(), ext.ID))
			bb20Wait(t, ctx, `(document.querySelector("main").innerText.includes("% on the current build"))`, "no share shown")
			if tz := evalJS[string](t, ctx, `Intl.DateTimeFormat().resolvedOptions().timeZone`); tz != zone {
				t.Fatalf("the tab's time zone is %q, want %q", tz, zone)
			}
			got := bb20ReadAdoption(t, ctx)
			if !strings.Contains(got.Text, "50% on the current build") {
				t.Errorf("in %s the section reads %q, want 50%%", zone, got.Text)
			}
			todayUTC := time.Now().UTC()
			for _, r := range got.Rows {
				if slicesContains(r, cur) {
					line := strings.Join(r, " | ")
					if !strings.Contains(line, todayUTC.Format("Jan 2")) && !strings.Contains(line, todayUTC.Format("2006-01-02")) {
						t.Errorf("in %s today's UTC checks are under %q, want %s (the table says its days are UTC)", zone, line, todayUTC.Format("Jan 2"))
					}
				}
			}
		})
	}
}

// TestBB20NotesWithAControlCharacter: notes holding a control character
// (a BEL pasted from a terminal) are refused: the panel says so and
// publishes nothing; the notes box keeps them to fix.
func TestBB20NotesWithAControlCharacter(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)
	bb20Wait(t, ctx, bb20NotesBox+` !== null`, "the upload panel has no notes box")
	before := api.bundles(ext.ID)[0].Number
	bb20Click(t, ctx, "the notes box", bb20NotesBox)
	bb20Insert(t, ctx, "build ok\u0007 done")
	if !evalJS[bool](t, ctx, bb20NotesBox+`.value.includes("\u0007")`) {
		t.Skip("the box dropped the control character as it was pasted: nothing to refuse")
	}
	tr := trackRequests(t, ctx, "/api/submit/")
	dropFiles(t, ctx, bb20Zip(t, "9.4.0"))
	bb20Wait(t, ctx, `/control|character|release notes/i.test([...document.querySelectorAll("#upload-panel [role=alert], #upload-panel .state-error, #upload-panel [aria-live]")].map(e => e.textContent).join(" "))`,
		"notes with a control character: the panel never said what is wrong")
	// The panel has taken the zip in (it names it), and a submit call, if
	// one was made, has been answered.
	bb20Wait(t, ctx, `document.querySelector("#upload-panel").innerText.includes("tab-tamer-9.4.0.zip")`, "the panel never showed the dropped zip")
	tr.waitSettled(t, 300*time.Millisecond, patient(10*time.Second))
	if n := api.bundles(ext.ID)[0].Number; n != before {
		t.Fatalf("notes with a control character published bundle #%d", n)
	}
	t.Logf("the panel says: %q", evalJS[string](t, ctx, `document.querySelector("#upload-panel").innerText`))
	if !evalJS[bool](t, ctx, bb20NotesBox+`.value.includes("build ok")`) {
		t.Errorf("after the refusal the notes box lost what was written")
	}
}

// TestBB20RollbackByKeyboardAndRace: the question opens from the keyboard
// and Escape closes it, changing nothing, with the focus back where it was;
// two tabs that both confirm "Roll back to #A" publish one rollback.
func TestBB20RollbackByKeyboardAndRace(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	key := setKey(t, m.Store, ext.ID)
	a := bb20Submit(t, m.URL(), ext.ID, key, "9.0.0", "")
	b := bb20Submit(t, m.URL(), ext.ID, key, "9.1.0", "")
	one, two := adminTab(t, m, d), newTab(t)
	page := fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID)
	openApp(t, one, page)
	openApp(t, two, page)
	for _, c := range []context.Context{one, two} {
		bb20Wait(t, c, bb20RollbackButton(a.Number)+` !== undefined`, fmt.Sprintf(`no "Roll back to #%d" button`, a.Number))
	}

	// Keyboard: Tab to the button, Enter asks, Escape closes.
	var on bool
	for i := 0; i < 80 && !on; i++ {
		bbPress(t, one, kb.Tab)
		on = evalJS[bool](t, one, fmt.Sprintf(`document.activeElement.textContent.trim() === "Roll back to #%d"`, a.Number))
	}
	if !on {
		t.Fatalf("Tab never reached Roll back to #%d (focus on %v)", a.Number, focused(t, one))
	}
	bbPress(t, one, kb.Enter)
	bb20Wait(t, one, bb20ConfirmButton+` !== undefined`, "Enter on Roll back asked nothing")
	// The button pressed is gone: the focus goes to the question's buttons,
	// not to the page's body (where Escape reaches nothing).
	if _, err := chromedp.Run(one, chromedp.Poll[bool](`(() => { const e = document.activeElement; return e && e.tagName === "BUTTON" && /roll back|cancel/i.test(e.textContent + (e.getAttribute("aria-label") || "")); })()`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(3*time.Second))); err != nil {
		t.Fatalf("the rollback question opened from the keyboard but the focus is on %v, not its buttons: a keyboard user is thrown to the top of the page (%v)", focused(t, one), err)
	}
	bbPress(t, one, kb.Escape)
	bb20Wait(t, one, bb20ConfirmButton+` === undefined`, "Escape did not close the question")
	bb20Wait(t, one, fmt.Sprintf(`document.activeElement.textContent.trim() === "Roll back to #%d"`, a.Number), "after Escape the focus is not back on Roll back")
	if top := api.bundles(ext.ID)[0]; top.Number != b.Number {
		t.Fatalf("Escape rolled back: the top bundle is #%d", top.Number)
	}

	// Two tabs open the question; both confirm, one after the other.
	rollbacks := []*reqTracker{trackRequests(t, one, "/rollback"), trackRequests(t, two, "/rollback")}
	for _, c := range []context.Context{one, two} {
		bb20Click(t, c, "Roll back to #A", bb20RollbackButton(a.Number))
		bb20Wait(t, c, bb20ConfirmButton+` !== undefined`, "Roll back asked nothing")
	}
	yes2 := evalJS[[]float64](t, two, `(() => { const r = (`+bb20ConfirmButton+`).getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`)
	bb20Click(t, one, "Yes in tab 1", bb20ConfirmButton)
	do(t, two,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, yes2[0], yes2[1]),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, yes2[0], yes2[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, yes2[0], yes2[1], chromedp.ButtonLeft, chromedp.ClickCount(1)))
	bb20Wait(t, one, fmt.Sprintf(`document.querySelector("#current-bundle").textContent.trim() === "#%d"`, b.Number+1), "tab 1: the rollback never became current")
	bb20Wait(t, two, fmt.Sprintf(`document.querySelector("#current-bundle").textContent.trim() === "#%d"`, b.Number+1), "tab 2: the rollback never showed")
	// Each tab's confirmation has been answered.
	for _, tr := range rollbacks {
		tr.waitSettled(t, 300*time.Millisecond, patient(10*time.Second))
	}
	bs := api.bundles(ext.ID)
	if bs[0].Number != b.Number+1 || bs[0].RollbackOf != a.Number {
		t.Errorf("two tabs confirming the same rollback: the top bundles are #%d (rollback of %d), #%d, want one rollback #%d", bs[0].Number, bs[0].RollbackOf, bs[1].Number, b.Number+1)
	}
	if err := evalJS[string](t, two, `[...document.querySelectorAll("main [role=alert]")].map(e => e.checkVisibility() ? e.textContent : "").join("")`); strings.TrimSpace(err) != "" {
		t.Logf("tab 2 says: %q", err)
	}
}

// bb20VisibleText says whether some shown element of main holds s.
func bb20VisibleText(s string) string {
	return fmt.Sprintf(`[...document.querySelectorAll("main *")].some(e => e.checkVisibility() && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.includes(%q)))`, s)
}

// TestBB20NotesFollowPublishAndRollback: a tester's open builds page shows
// the current build's notes as they change, without a reload: a publish
// with notes shows them, a later one without notes stops showing them as
// current, a rollback to the first shows its notes again. In the panel, a
// failed upload keeps the notes typed; a published one empties the box for
// the next bundle.
func TestBB20NotesFollowPublishAndRollback(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	tester := bbkPrivateTab(t)
	openApp(t, tester, m.URL()+d.TesterLink)
	bb20Wait(t, tester, `!!document.querySelector("#builds [data-build]")`, "the tester's builds never showed")

	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)
	bb20Wait(t, ctx, bb20NotesBox+` !== null`, "the upload panel has no notes box")

	// A zip that is no extension: refused, the notes stay to try again.
	bb20Click(t, ctx, "the notes box", bb20NotesBox)
	do(t, ctx, chromedp.KeyEvent("Alpha notes for testers"))
	dropFiles(t, ctx, pageFile{Name: "broken.zip", Type: "application/zip", Data: extensionZip(t, map[string]string{"readme.txt": "no manifest"})})
	bb20Wait(t, ctx, `/manifest/i.test(document.querySelector("#upload-panel").innerText)`, "a zip with no manifest: the panel never said so")
	if v := evalJS[string](t, ctx, bb20NotesBox+`.value`); v != "Alpha notes for testers" {
		t.Errorf("after a refused zip the notes box holds %q, want the notes typed", v)
	}

	// Published with the notes: the tester sees them as current.
	dropFiles(t, ctx, bb20Zip(t, "9.2.0"))
	bb20Wait(t, ctx, `document.querySelector("#upload-result") !== null`, "the zip was never published")
	first := api.bundles(ext.ID)[0]
	if first.ReleaseNotes != "Alpha notes for testers" {
		t.Fatalf("the published bundle's notes are %q", first.ReleaseNotes)
	}
	bb20Wait(t, tester, bb20VisibleText("Alpha notes for testers"), "the tester's open builds page never showed the new current build's notes")
	if v := evalJS[string](t, ctx, bb20NotesBox+`.value`); v != "" {
		t.Errorf("after publishing, the notes box still holds %q: the next bundle dropped would carry them", v)
	}

	// A bundle without notes: the first notes are no longer shown as the
	// current build's.
	bb20Click(t, ctx, "the notes box", bb20NotesBox)
	bb20SelectAll(t, ctx)
	bbPress(t, ctx, kb.Delete)
	openUploadPanel(t, ctx, m.URL(), ext.ID)
	dropFiles(t, ctx, bb20Zip(t, "9.3.0"))
	bb20Wait(t, ctx, `document.querySelector("#upload-result") !== null`, "the second zip was never published")
	second := api.bundles(ext.ID)[0]
	if second.ReleaseNotes != "" {
		t.Errorf("the second bundle, published with the box emptied, carries notes %q", second.ReleaseNotes)
	}
	bb20Wait(t, tester, fmt.Sprintf(`[...document.querySelectorAll("#builds [data-build]")].some(r => r.textContent.includes("#%d"))`, second.Number), "the tester never saw the second bundle")
	bb20Wait(t, tester, `!`+bb20VisibleText("Alpha notes for testers"), "the tester's page still shows the first bundle's notes after a bundle without notes became current")

	// Roll back to the first: its notes are the current build's again.
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	bb20Wait(t, ctx, bb20RollbackButton(first.Number)+` !== undefined`, "no Roll back button for the first bundle")
	bb20Click(t, ctx, "Roll back", bb20RollbackButton(first.Number))
	bb20Click(t, ctx, "Yes", bb20ConfirmButton)
	bb20Wait(t, tester, fmt.Sprintf(`[...document.querySelectorAll("#builds [data-build]")].some(r => r.textContent.includes("#%d"))`, second.Number+1), "the tester never saw the rollback")
	bb20Wait(t, tester, bb20VisibleText("Alpha notes for testers"), "after the rollback the tester's page does not show the rolled-back build's notes as current")
}

// TestBB20WebhookErrorTiedToField: a refused URL's error is tied to the
// field for a screen reader (aria-invalid, aria-describedby), not only
// announced once: moving back to the field says what is wrong with it.
func TestBB20WebhookErrorTiedToField(t *testing.T) {
	t.Parallel()
	m, d := startWebhookService(t)
	ext := d.Extensions[0]
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	bb20Wait(t, ctx, bb20Visible("#webhooks-empty"), "the settings page never said there are no webhooks")
	bb20Type(t, ctx, "#webhook-url", "ftp://x")
	bbPress(t, ctx, kb.Enter)
	bb20Wait(t, ctx, bb20Visible("#webhook-error")+` && document.querySelector("#webhook-error").textContent.trim() !== ""`, "a refused URL showed no error")
	inv := evalJS[[]string](t, ctx, `[document.querySelector("#webhook-url").getAttribute("aria-invalid") || "", document.querySelector("#webhook-url").getAttribute("aria-describedby") || ""]`)
	if inv[0] != "true" || !strings.Contains(inv[1], "webhook-error") {
		t.Errorf("the refused URL field has aria-invalid=%q aria-describedby=%q, want true and the error's id (webhook-error)", inv[0], inv[1])
	}
}

// TestBB20WebhookDeliveriesShowAnswers: "each webhook shows its recent
// deliveries and their answers": the receiver's answer (the body the API
// keeps as response, and for a failure why it failed) can be read on the
// page, not only the status code.
func TestBB20WebhookDeliveriesShowAnswers(t *testing.T) {
	t.Parallel()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "receiver-says-thanks")
	}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "receiver-is-broken: disk full")
	}))
	defer bad.Close()
	m, d := startWebhookService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	bb20Wait(t, ctx, bb20Visible("#webhooks-empty"), "the settings page never said there are no webhooks")
	for _, u := range []string{ok.URL + "/ok", bad.URL + "/bad"} {
		bb20Click(t, ctx, "the URL field", `document.querySelector("#webhook-url")`)
		bb20SelectAll(t, ctx)
		do(t, ctx, chromedp.KeyEvent(u))
		bbPress(t, ctx, kb.Enter)
		bb20Wait(t, ctx, fmt.Sprintf(`[...document.querySelectorAll("[data-webhook]")].some(r => r.innerText.includes(%q))`, u), "the webhook never showed")
	}
	row := func(u string) string {
		return fmt.Sprintf(`[...document.querySelectorAll("[data-webhook]")].find(r => r.innerText.includes(%q))`, u)
	}
	for _, c := range []struct{ url, status, answer string }{{ok.URL + "/ok", "200", "receiver-says-thanks"}, {bad.URL + "/bad", "500", "receiver-is-broken: disk full"}} {
		bb20Click(t, ctx, "Send test event", row(c.url)+`.querySelector(".test-webhook")`)
		bb20Wait(t, ctx, row(c.url)+`.querySelector(".delivery")?.innerText.includes(`+strconv.Quote(c.status)+`)`, "the delivery never showed its status "+c.status)
		// The API has the answer...
		var hooks struct {
			Data []struct {
				ID  json.RawMessage `json:"id"`
				URL string          `json:"url"`
			} `json:"data"`
		}
		api.get(fmt.Sprintf("/api/extensions/%d/webhooks", ext.ID), &hooks)
		var id string
		for _, h := range hooks.Data {
			if h.URL == c.url {
				id = strings.Trim(string(h.ID), `"`)
			}
		}
		var dels struct {
			Data []struct {
				Response string `json:"response"`
			} `json:"data"`
		}
		// The service records the answer after the receiver sends it.
		for i := 0; i < 50; i++ {
			api.get(fmt.Sprintf("/api/extensions/%d/webhooks/%s/deliveries", ext.ID, id), &dels)
			if len(dels.Data) > 0 && dels.Data[0].Response != "" {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if len(dels.Data) == 0 || dels.Data[0].Response != c.answer {
			t.Fatalf("the API's deliveries to %s are %+v, want the answer %q", c.url, dels.Data, c.answer)
		}
		// ...and so must the page (it once did not: the answer was nowhere
		// on it, shown or not). Read until it is there.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](row(c.url)+`.outerHTML.includes(`+strconv.Quote(c.answer)+`)`,
			chromedp.WithPollingInterval(30*time.Millisecond), chromedp.WithPollingTimeout(patient(5*time.Second)))); err != nil {
			t.Errorf("the delivery to %s shows no answer %q (the API's response): %s", c.url, c.answer, evalJS[string](t, ctx, row(c.url)+`.querySelector(".delivery").outerHTML`))
		}
	}
}

// bb20Reflow lists what breaks the page at its width: sideways scrolling
// and text leaving the window.
func bb20Reflow(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return evalJS[[]string](t, ctx, `(() => {
		const out = [], w = innerWidth;
		if (document.scrollingElement.scrollWidth > w) out.push("the page scrolls sideways: " + document.scrollingElement.scrollWidth + " > " + w);
		for (const el of document.querySelectorAll("main *")) {
			if (!el.checkVisibility() || ![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
			const r = el.getBoundingClientRect();
			if (r.width && (r.right > w + 1 || r.left < -1) && !el.closest(".grid-head, .visually-hidden")) out.push("text leaves the window: <" + el.tagName.toLowerCase() + "." + el.className + "> " + el.textContent.trim().slice(0, 40));
		}
		return out.slice(0, 6);
	})()`)
}

// TestBB20LongNotesAndURLsReflow: notes written the way people paste them
// (a long unbroken URL, a long link, a stack trace line) and a long webhook
// URL stay inside a 320 px window: no sideways scrolling, on the tester's
// builds page, with a row's notes open, in the admin's list and on the
// settings page.
func TestBB20LongNotesAndURLsReflow(t *testing.T) {
	t.Parallel()
	m, d := startWebhookService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	key := setKey(t, m.Store, ext.ID)
	long := "https://ci.example.com/" + strings.Repeat("artifacts/build-1234567890/", 12) + "log.txt"
	notes := "See " + long + "\n\n- [the full changelog with a long name](" + long + ")\n- at com.example.VeryLongClassName.methodWithAVeryLongName(" + strings.Repeat("Argument", 20) + ".java:42)"
	b := bb20Submit(t, m.URL(), ext.ID, key, "9.6.0", notes)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer rc.Close()
	code, raw := api.call(http.MethodPost, fmt.Sprintf("/api/extensions/%d/webhooks", ext.ID), map[string]string{"url": rc.URL + "/" + strings.Repeat("hooks/betaport-release-events/", 8)})
	if code != http.StatusCreated {
		t.Fatalf("adding a webhook with a long URL: %d %s", code, raw)
	}

	ctx := adminTab(t, m, d)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(320, 800)); err != nil {
		t.Fatal(err)
	}
	report := func(where string) {
		t.Helper()
		for _, p := range bb20Reflow(t, ctx) {
			t.Errorf("%s at 320 px: %s", where, p)
		}
	}
	// The admin's list, the top row's notes opened with a tap.
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	row := fmt.Sprintf(`document.querySelector('#bundle-rows [data-bundle="%d"]')`, b.Number)
	bb20Wait(t, ctx, row+` !== null`, "the bundle never showed")
	bb20Click(t, ctx, "the row's Notes", row+`.querySelector("[aria-expanded]")`)
	bb20Wait(t, ctx, row+`.querySelector("[aria-expanded]").getAttribute("aria-expanded") === "true"`, "the row's notes never opened")
	report("the bundles list with a row's notes open")
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	bb20Wait(t, ctx, `!!document.querySelector("[data-webhook]")`, "the webhook never showed")
	report("the settings page with a long webhook URL")

	// The tester (the invite link signs this browser in as them).
	openApp(t, ctx, m.URL()+d.TesterLink)
	bb20Wait(t, ctx, bb20VisibleText("See https://ci.example.com/"), "the tester's page never showed the current notes")
	report("the tester's builds page with the current build's notes")
	brow := fmt.Sprintf(`[...document.querySelectorAll("#builds [data-build]")].find(r => r.textContent.includes("#%d"))`, b.Number)
	bb20Click(t, ctx, "the build's Notes", brow+`.querySelector("[aria-expanded]")`)
	bb20Wait(t, ctx, brow+`.querySelector("[aria-expanded]").getAttribute("aria-expanded") === "true"`, "the build's notes never opened")
	report("the tester's builds page with a row's notes open")
}

// TestBB20WebhookDeliveriesReflow: on a phone (320 px) a webhook's
// deliveries fit the window: no sideways scrolling to read a delivery's
// status and time.
func TestBB20WebhookDeliveriesReflow(t *testing.T) {
	t.Parallel()
	m, d := startWebhookService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer rc.Close()
	code, raw := api.call(http.MethodPost, fmt.Sprintf("/api/extensions/%d/webhooks", ext.ID), map[string]string{"url": rc.URL + "/h"})
	if code != http.StatusCreated {
		t.Fatalf("adding a webhook: %d %s", code, raw)
	}
	var hook struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(raw, &hook)
	if code, raw := api.call(http.MethodPost, fmt.Sprintf("/api/extensions/%d/webhooks/%s/test", ext.ID, strings.Trim(string(hook.ID), `"`)), nil); code != http.StatusAccepted {
		t.Fatalf("sending a test event: %d %s", code, raw)
	}
	ctx := adminTab(t, m, d)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(320, 800)); err != nil {
		t.Fatal(err)
	}
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	bb20Wait(t, ctx, `!!document.querySelector('[data-webhook] .delivery[data-state="delivered"]')`, "the delivery never showed")
	for _, p := range bb20Reflow(t, ctx) {
		t.Errorf("the settings page with a delivery at 320 px: %s", p)
	}
}

// TestBB20RollbackShowsOnWebhooks: a rollback made in the browser reaches
// the extension's webhook as bundle.rolled_back, and the settings page
// lists that delivery, delivered.
func TestBB20RollbackShowsOnWebhooks(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer rc.Close()
	m, d := startWebhookService(t)
	ext := d.Extensions[0]
	api := bb20AdminAPI(t, m, d)
	key := setKey(t, m.Store, ext.ID)
	a := bb20Submit(t, m.URL(), ext.ID, key, "9.0.0", "notes of A")
	bb20Submit(t, m.URL(), ext.ID, key, "9.1.0", "")
	if code, raw := api.call(http.MethodPost, fmt.Sprintf("/api/extensions/%d/webhooks", ext.ID), map[string]string{"url": rc.URL + "/h"}); code != http.StatusCreated {
		t.Fatalf("adding a webhook: %d %s", code, raw)
	}
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	bb20Wait(t, ctx, bb20RollbackButton(a.Number)+` !== undefined`, "no Roll back button")
	bb20Click(t, ctx, "Roll back", bb20RollbackButton(a.Number))
	bb20Click(t, ctx, "Yes", bb20ConfirmButton)
	bb20Wait(t, ctx, `document.querySelector("#bundle-rows [data-bundle]").innerText.includes("rollback of #`+strconv.Itoa(a.Number)+`")`, "the rollback never showed")
	bb20Click(t, ctx, "Settings", `document.querySelector("#nav-settings")`)
	bb20Wait(t, ctx, `[...document.querySelectorAll('[data-webhook] .delivery')].some(r => r.innerText.includes("bundle.rolled_back") && r.dataset.state === "delivered")`,
		"the settings page never listed the rollback's delivery as delivered")
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, b := range bodies {
		if strings.Contains(b, `"bundle.rolled_back"`) {
			got = append(got, b)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf(`"rollbackOf":%d`, a.Number)) || !strings.Contains(got[0], `"releaseNotes":"notes of A"`) {
		t.Errorf("the receiver got %d rolled_back events: %v, want one naming rollbackOf %d with A's notes", len(got), got, a.Number)
	}
}
