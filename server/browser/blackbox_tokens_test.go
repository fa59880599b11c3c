package browser_test

// Black-box browser tests of the access tokens on an extension's settings
// page: clumsy and hostile use through real input only (pointer clicks and
// key presses); JavaScript only reads the page, and the effects are checked
// through the API with the secret the page showed.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// bbtToken is an access token as GET /api/extensions/{id}/tokens lists it.
type bbtToken struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"createdAt"`
	ExpiresAt  string   `json:"expiresAt"`
	LastUsedAt string   `json:"lastUsedAt"`
	RevokedAt  string   `json:"revokedAt"`
}

// bbtEnv is a service, the extension whose settings page is open, and an
// admin's tab on it.
type bbtEnv struct {
	m      *cli.Main
	d      *demo.Result
	extID  int64
	ctx    context.Context
	cookie *http.Cookie
}

func (e *bbtEnv) settingsURL() string {
	return fmt.Sprintf("%s/extensions/%d/settings", e.m.URL(), e.extID)
}

// bbtOpen starts a service and opens an admin's tab on the settings page of
// the demo's second extension.
func bbtOpen(t *testing.T) *bbtEnv {
	t.Helper()
	m, d := startService(t)
	e := &bbtEnv{m: m, d: d, extID: d.Extensions[1].ID}
	e.ctx = adminTab(t, m, d)
	e.cookie = signInHTTP(t, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	bbtLoad(t, e.ctx, e.settingsURL())
	return e
}

func bbtLoad(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	openApp(t, ctx, url)
	waitJS(t, ctx, `document.querySelector('#token-form') !== null && document.querySelector('#tokens-list') !== null && document.querySelector('#scope-read')?.checked === true`)
}

// tokens lists the extension's tokens through the API, as the admin.
func (e *bbtEnv) tokens(t *testing.T) []bbtToken {
	t.Helper()
	req, _ := http.NewRequest("GET", e.m.URL()+api.TokensPath(e.extID)+"?limit=100", nil)
	req.AddCookie(e.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("listing tokens: %d %s", resp.StatusCode, body)
	}
	var page struct {
		Data []bbtToken `json:"data"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatalf("listing tokens: %v: %s", err, body)
	}
	return page.Data
}

// bearer calls the API with the secret and answers the status and body.
func (e *bbtEnv) bearer(t *testing.T, secret, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, e.m.URL()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e *bbtEnv) invite(t *testing.T, secret, email string) (int, string) {
	t.Helper()
	return e.bearer(t, secret, "POST", api.TestersPath(e.extID), fmt.Sprintf(`{"email": %q, "name": "S"}`, email))
}

// typeName clicks the name field, empties it with the keyboard and types s.
func typeName(t *testing.T, ctx context.Context, s string) {
	t.Helper()
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)),
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.KeyEvent(kb.Backspace))
	if s != "" {
		do(t, ctx, chromedp.KeyEvent(s))
	}
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('#token-name').value === %q`, s))
}

// secretShown waits for the one-time secret and answers it.
func secretShown(t *testing.T, ctx context.Context) string {
	t.Helper()
	waitJS(t, ctx, `(document.querySelector('#token-secret')?.value ?? "").startsWith("bpt_")`)
	return evalJS[string](t, ctx, `document.querySelector('#token-secret').value`)
}

// done presses Done and waits for the secret to go.
func done(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-done`)))
	waitJS(t, ctx, `document.querySelector('#token-secret') === null`)
}

// secretAnywhere is JS: does the page hold the secret anywhere (markup,
// field values, storage, history state)?
func secretAnywhere(secret string) string {
	return fmt.Sprintf(`(() => { const s = %q;
		if (document.documentElement.outerHTML.includes(s)) return "markup";
		for (const el of document.querySelectorAll("input, textarea")) if ((el.value ?? "").includes(s)) return "field " + (el.id || el.name);
		for (const st of [localStorage, sessionStorage]) for (let i = 0; i < st.length; i++) { const k = st.key(i); if ((st.getItem(k) ?? "").includes(s)) return "storage " + k; }
		if (JSON.stringify(history.state ?? null).includes(s)) return "history.state";
		return ""; })()`, secret)
}

// makeToken types a name, ticks the extra scopes and presses Enter; it
// answers the secret shown.
func makeToken(t *testing.T, ctx context.Context, name string, scopes ...string) string {
	t.Helper()
	typeName(t, ctx, name)
	for _, s := range scopes {
		do(t, ctx, chromedp.Click(chromedp.CSS(`#scope-`+s)))
		waitJS(t, ctx, fmt.Sprintf(`document.querySelector('#scope-%s').checked`, s))
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)), chromedp.KeyEvent(kb.Enter))
	return secretShown(t, ctx)
}

// emptyNameRefused waits for an empty name's refusal: the page's message
// naming the name, or the browser's own (the field is required), and the
// focus in the name field.
func emptyNameRefused(t *testing.T, ctx context.Context, how string) {
	t.Helper()
	waitJS(t, ctx, bbtErrorShown+` || (document.querySelector('#token-name').validity.valueMissing && document.activeElement?.id === "token-name")`)
	if evalJS[bool](t, ctx, bbtErrorShown) {
		if msg := text(t, ctx, `#token-error`); !strings.Contains(strings.ToLower(msg), "name") {
			t.Errorf("%s: the refusal reads %q: it does not say to name the token", how, msg)
		}
	} else {
		t.Logf("doubtful: %s: the page shows no message of its own (#token-error stays hidden); only the browser's required-field bubble refuses", how)
	}
	waitJS(t, ctx, `document.activeElement?.id === "token-name"`)
}

const bbtErrorShown = `(() => { const e = document.querySelector('#token-error'); return !!e && !e.hidden && e.offsetParent !== null && e.innerText.trim() !== ""; })()`

// Enter with an empty (or blank) name is refused with a message saying what
// to do; the focus goes back to the name; nothing is made.
func TestBBTokPageEmptyNameRefused(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx

	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)), chromedp.KeyEvent(kb.Enter))
	emptyNameRefused(t, ctx, "Enter in an empty name")
	if n := evalJS[bool](t, ctx, `document.querySelector('#token-secret') !== null`); n {
		t.Error("an empty name showed a secret")
	}

	// Spaces only are no name either.
	typeName(t, ctx, "   ")
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, bbtErrorShown+` || document.querySelector('#token-secret') !== null`)
	if !evalJS[bool](t, ctx, bbtErrorShown) {
		t.Error("a name of spaces only was not refused")
	} else if msg := text(t, ctx, `#token-error`); !strings.Contains(strings.ToLower(msg), "name") {
		t.Errorf("the refusal of a blank name reads %q", msg)
	}
	waitJS(t, ctx, `document.activeElement?.id === "token-name"`)
	// Pressing the button with the pointer on an empty name is refused alike.
	typeName(t, ctx, "")
	do(t, ctx, chromedp.Click(chromedp.CSS(`#create-token`)))
	emptyNameRefused(t, ctx, "Make token clicked with an empty name")
	if toks := e.tokens(t); len(toks) != 0 {
		t.Fatalf("a blank name made tokens: %+v", toks)
	}
	if evalJS[int](t, ctx, `document.querySelectorAll('#tokens [data-token]').length`) != 0 {
		t.Error("a blank name added a row to the list")
	}

	// A name typed after the refusal makes the token, and the message goes.
	secret := makeToken(t, ctx, "after refusal")
	waitJS(t, ctx, `(() => { const e = document.querySelector('#token-error'); return !e || e.hidden || e.innerText.trim() === ""; })()`)
	if s, b := e.bearer(t, secret, "GET", api.TestersPath(e.extID), ""); s != http.StatusOK {
		t.Fatalf("the token made after the refusal: GET testers %d %s", s, b)
	}
}

// With every scope unticked, Enter is refused and nothing is made; ticking
// one scope again and retrying makes a token with that scope only.
func TestBBTokPageNoScopesRefused(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx

	typeName(t, ctx, "scopeless")
	do(t, ctx, chromedp.Click(chromedp.CSS(`#scope-read`)))
	waitJS(t, ctx, `[...document.querySelectorAll('#token-scopes input[type=checkbox]')].every(c => !c.checked)`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, bbtErrorShown)
	msg := text(t, ctx, `#token-error`)
	if !strings.Contains(strings.ToLower(msg), "scope") {
		t.Errorf("the refusal of no scopes reads %q: it does not say to tick a scope", msg)
	}
	if evalJS[bool](t, ctx, `document.querySelector('#token-secret') !== null`) {
		t.Fatal("a token with no scopes showed a secret")
	}
	if toks := e.tokens(t); len(toks) != 0 {
		t.Fatalf("no scopes made tokens: %+v", toks)
	}
	// The name typed is kept for the retry.
	if v := evalJS[string](t, ctx, `document.querySelector('#token-name').value`); v != "scopeless" {
		t.Errorf("after the refusal the name reads %q, want it kept", v)
	}

	do(t, ctx, chromedp.Click(chromedp.CSS(`#scope-feedback`)))
	waitJS(t, ctx, `document.querySelector('#scope-feedback').checked`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)), chromedp.KeyEvent(kb.Enter))
	secret := secretShown(t, ctx)
	toks := e.tokens(t)
	if len(toks) != 1 || strings.Join(toks[0].Scopes, ",") != "feedback" {
		t.Fatalf("the token made = %+v, want one with the feedback scope only", toks)
	}
	// Without read, a GET is refused (403), not allowed.
	if s, b := e.bearer(t, secret, "GET", api.TestersPath(e.extID), ""); s != http.StatusForbidden {
		t.Errorf("a feedback-only token reading testers: %d %s, want 403", s, b)
	}
}

// A typo in the name, fixed with Backspace, then retried after a refusal:
// one token, with the fixed name.
func TestBBTokPageTypoFixedThenRetried(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx

	typeName(t, ctx, "nigthly")
	// First try without any scope: refused.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#scope-read`)))
	waitJS(t, ctx, `!document.querySelector('#scope-read').checked`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#create-token`)))
	waitJS(t, ctx, bbtErrorShown)

	// Fix the typo at the end of the field, tick read and testers, retry.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)), chromedp.KeyEvent(kb.End))
	for range 4 {
		do(t, ctx, chromedp.KeyEvent(kb.Backspace))
	}
	do(t, ctx, chromedp.KeyEvent("htly"))
	waitJS(t, ctx, `document.querySelector('#token-name').value === "nightly"`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#scope-read`)), chromedp.Click(chromedp.CSS(`#scope-testers`)))
	waitJS(t, ctx, `document.querySelector('#scope-read').checked && document.querySelector('#scope-testers').checked`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)), chromedp.KeyEvent(kb.Enter))
	secret := secretShown(t, ctx)
	waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length === 1`)
	toks := e.tokens(t)
	if len(toks) != 1 || toks[0].Name != "nightly" || strings.Join(toks[0].Scopes, ",") != "read,testers" {
		t.Fatalf("tokens = %+v, want one named nightly with read,testers", toks)
	}
	if row := text(t, ctx, `#tokens [data-token]`); !strings.Contains(row, "nightly") || strings.Contains(row, "nigthly") {
		t.Errorf("the row reads %q", row)
	}
	if s, b := e.invite(t, secret, "typo@example.com"); s != http.StatusCreated {
		t.Fatalf("inviting with the fixed token: %d %s", s, b)
	}
}

// Enter pressed twice quickly, and the button clicked twice quickly, each
// make one token.
func TestBBTokPageDoubleSubmitMakesOne(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx

	typeName(t, ctx, "twice")
	do(t, ctx, chromedp.KeyEvent(kb.Enter), chromedp.KeyEvent(kb.Enter))
	first := secretShown(t, ctx)
	waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length >= 1`)
	done(t, ctx)
	// A second request, if any was sent, has been answered once the page
	// reads the list again.
	bbtLoad(t, ctx, e.settingsURL())
	waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length >= 1`)
	if toks := e.tokens(t); len(toks) != 1 {
		t.Errorf("Enter pressed twice made %d tokens: %+v", len(toks), toks)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#tokens [data-token]').length`); n != 1 {
		t.Errorf("after Enter twice the list shows %d rows", n)
	}

	typeName(t, ctx, "clicked twice")
	do(t, ctx, chromedp.Click(chromedp.CSS(`#create-token`)), chromedp.Click(chromedp.CSS(`#create-token`)))
	second := secretShown(t, ctx)
	if second == first {
		t.Fatal("the second token showed the first one's secret")
	}
	done(t, ctx)
	bbtLoad(t, ctx, e.settingsURL())
	waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length >= 2`)
	n := 0
	for _, tok := range e.tokens(t) {
		if tok.Name == "clicked twice" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the button clicked twice made %d tokens", n)
	}
}

// A 300-character name, and a name with markup: the page either refuses it
// with a message or keeps exactly what the field holds; the row shows the
// name as text, and the page does not grow wider than the window.
func TestBBTokPageLongAndHostileName(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx

	long := strings.Repeat("abcdefghij", 30)
	typeNameLoose := func(s string) {
		do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)),
			chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
			chromedp.KeyEvent(kb.Backspace), chromedp.KeyEvent(s))
	}
	typeNameLoose(long)
	waitJS(t, ctx, `document.querySelector('#token-name').value.length >= 100`)
	field := evalJS[string](t, ctx, `document.querySelector('#token-name').value`)
	if len(field) != len(long) {
		t.Logf("doubtful: 300 characters typed, the field silently kept %d (no message says the name was cut)", len(field))
	}
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, bbtErrorShown+` || document.querySelector('#token-secret') !== null`)
	if evalJS[bool](t, ctx, `document.querySelector('#token-secret') !== null`) {
		toks := e.tokens(t)
		if len(toks) != 1 || toks[0].Name != field {
			t.Fatalf("the long name made %+v, want one token named what the field held (%d chars)", toks, len(field))
		}
		done(t, ctx)
		waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length === 1`)
		if row := text(t, ctx, `#tokens [data-token]`); !strings.Contains(row, field) {
			t.Errorf("the long name's row does not show the whole name: %q", row)
		}
	} else if toks := e.tokens(t); len(toks) != 0 {
		t.Fatalf("a refused long name made %+v", toks)
	}
	if w := evalJS[string](t, ctx, `document.documentElement.scrollWidth > document.documentElement.clientWidth ? document.documentElement.scrollWidth + " > " + document.documentElement.clientWidth : ""`); w != "" {
		t.Errorf("with a long token name the page scrolls sideways: %s", w)
	}
	if o := evalJS[string](t, ctx, `(() => { const r = document.querySelector('#tokens [data-token]'); if (!r) return ""; const l = document.querySelector('#tokens').getBoundingClientRect(); const b = r.getBoundingClientRect(); return b.right > l.right + 1 ? b.right + " > " + l.right : ""; })()`); o != "" {
		t.Errorf("the long name's row runs out of the list: %s", o)
	}

	hostile := `<img src=x id=pwn onerror="window.pwned=1"> & "q" 'a'`
	typeNameLoose(hostile)
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('#token-name').value === %q`, hostile))
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	secret := secretShown(t, ctx)
	done(t, ctx)
	waitJS(t, ctx, fmt.Sprintf(`[...document.querySelectorAll('#tokens [data-token]')].some(r => r.textContent.includes(%q))`, hostile))
	if evalJS[bool](t, ctx, `document.querySelector('#pwn') !== null || window.pwned === 1`) {
		t.Error("the token's name was rendered as markup")
	}
	if s, b := e.bearer(t, secret, "GET", api.PathToken, ""); s != http.StatusOK || !strings.Contains(b, "onerror") {
		t.Errorf("GET /api/token with the hostile-named token: %d %s", s, b)
	}
}

// Done, then Back and Forward: the secret never comes back, anywhere in the
// page or its storage; the list still shows the token.
func TestBBTokPageDoneBackForward(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx
	extURL := fmt.Sprintf("%s/extensions/%d", e.m.URL(), e.extID)

	secret := makeToken(t, ctx, "back and forth", "releases")
	done(t, ctx)
	if where := evalJS[string](t, ctx, secretAnywhere(secret)); where != "" {
		t.Fatalf("after Done the secret is still in the page (%s)", where)
	}
	// Away by the Bundles link, Back, Forward, Back.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#nav-bundles`)))
	waitLocation(t, ctx, extURL)
	do(t, ctx, chromedp.NavigateBack())
	waitLocation(t, ctx, e.settingsURL())
	do(t, ctx, chromedp.NavigateForward())
	waitLocation(t, ctx, extURL)
	do(t, ctx, chromedp.NavigateBack())
	waitLocation(t, ctx, e.settingsURL())
	waitJS(t, ctx, `document.querySelector('#token-form') !== null && [...document.querySelectorAll('#tokens [data-token]')].some(r => r.textContent.includes("back and forth"))`)
	if where := evalJS[string](t, ctx, secretAnywhere(secret)); where != "" {
		t.Errorf("after Done, Back and Forward the secret is in the page (%s)", where)
	}
	if evalJS[bool](t, ctx, `document.querySelector('#token-secret') !== null`) {
		t.Error("after Done, Back and Forward the secret panel shows again")
	}
	// Then a reload.
	do(t, ctx, chromedp.Reload())
	bbtLoad(t, ctx, e.settingsURL())
	waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length === 1`)
	if where := evalJS[string](t, ctx, secretAnywhere(secret)); where != "" {
		t.Errorf("after a reload the secret is in the page (%s)", where)
	}
	// The token still works.
	if s, b := e.bearer(t, secret, "GET", api.PathToken, ""); s != http.StatusOK {
		t.Errorf("GET /api/token: %d %s", s, b)
	}
}

// Away and Back while the secret still shows (Done never pressed): the
// secret is not shown again on the page come back to.
func TestBBTokPageBackWithoutDone(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx
	extURL := fmt.Sprintf("%s/extensions/%d", e.m.URL(), e.extID)
	secret := makeToken(t, ctx, "left open")
	do(t, ctx, chromedp.Click(chromedp.CSS(`#nav-bundles`)))
	waitLocation(t, ctx, extURL)
	if where := evalJS[string](t, ctx, secretAnywhere(secret)); where != "" {
		t.Errorf("on the extension's page the secret is still in the page (%s)", where)
	}
	do(t, ctx, chromedp.NavigateBack())
	waitLocation(t, ctx, e.settingsURL())
	waitJS(t, ctx, `[...document.querySelectorAll('#tokens [data-token]')].some(r => r.textContent.includes("left open"))`)
	if where := evalJS[string](t, ctx, secretAnywhere(secret)); where != "" {
		t.Logf("doubtful: the secret comes back after Back and Forward without Done (%s)", where)
	}
}

// A second tab of the same page sees the new token after a reload, never
// its secret; a revoke in the second tab shows in the first after a reload.
func TestBBTokPageSecondTabSeesToken(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	a := e.ctx
	b := adminTab(t, e.m, e.d)
	bbtLoad(t, b, e.settingsURL())
	waitJS(t, b, `document.querySelector('#tokens-empty') !== null`)

	secret := makeToken(t, a, "from tab A", "testers")
	do(t, b, chromedp.Reload())
	bbtLoad(t, b, e.settingsURL())
	waitJS(t, b, `[...document.querySelectorAll('#tokens [data-token]')].some(r => r.textContent.includes("from tab A"))`)
	if where := evalJS[string](t, b, secretAnywhere(secret)); where != "" {
		t.Errorf("the second tab holds the secret (%s)", where)
	}
	if evalJS[bool](t, b, `document.querySelector('#token-secret') !== null`) {
		t.Error("the second tab shows a secret panel")
	}

	// Tab B revokes it; tab A, still showing the secret, learns of it on a reload.
	do(t, b, chromedp.Click(chromedp.CSS(`#tokens [data-token] button.revoke`)))
	waitJS(t, b, `document.querySelector('#tokens [data-token] button.confirm-revoke[aria-disabled="false"]') !== null`)
	do(t, b, chromedp.Click(chromedp.CSS(`#tokens [data-token] button.confirm-revoke[aria-disabled="false"]`)))
	waitJS(t, b, `document.querySelector('#tokens [data-token] .badge-revoked') !== null`)
	if s, body := e.invite(t, secret, "afterrevoke@example.com"); s != http.StatusUnauthorized {
		t.Errorf("the token revoked in the other tab: %d %s, want 401", s, body)
	}
	do(t, a, chromedp.Reload())
	bbtLoad(t, a, e.settingsURL())
	waitJS(t, a, `document.querySelector('#tokens [data-token] .badge-revoked') !== null`)
	if evalJS[bool](t, a, `document.querySelector('#tokens [data-token] button.revoke') !== null`) {
		t.Error("a revoked token's row still offers Revoke")
	}
}

// Revoke, then Keep: the token keeps working; Revoke asks with a Yes that
// is not pressable at first.
func TestBBTokPageRevokeThenKeep(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx
	row := `#tokens [data-token]`
	// Yes pressed at once, before it is pressable, does nothing. The page
	// says how soon the press came after Yes showed (the model counts
	// model.ConfirmDelay from a moment before that); a press that came
	// later on a busy machine may revoke, as it should, and the test asks
	// again about a new token.
	const early = 200 // ms: well inside the delay
	var secret, name string
	lateRevoked := 0
	for attempt := 1; secret == ""; attempt++ {
		if attempt > 3 {
			t.Fatalf("three presses of Yes came too late to be early (the machine is too busy for this check)")
		}
		name = fmt.Sprintf("kept %d", attempt)
		candidate := makeToken(t, ctx, name, "testers")
		done(t, ctx)
		evalJS[bool](t, ctx, `(() => { window.yesShownAt = 0; window.yesPressedAt = 0;
			const seen = () => { if (!window.yesShownAt && document.querySelector('#tokens [data-token] button.confirm-revoke')) window.yesShownAt = performance.now(); };
			new MutationObserver(seen).observe(document.body, {subtree: true, childList: true, attributes: true});
			document.addEventListener('click', ev => { if (!window.yesPressedAt && ev.target.closest?.('button.confirm-revoke')) window.yesPressedAt = ev.timeStamp; }, true);
			return true; })()`)
		// The only row that offers Revoke is the new token's: earlier
		// attempts' tokens are revoked.
		do(t, ctx, chromedp.Click(chromedp.CSS(row+` button.revoke`)))
		waitJS(t, ctx, `document.querySelector('#tokens [data-token] button.confirm-revoke') !== null && document.querySelector('#tokens [data-token] button.cancel-revoke') !== null`)
		do(t, ctx, chromedp.Click(chromedp.CSS(row+` button.confirm-revoke`)))
		after := evalJS[float64](t, ctx, `window.yesPressedAt - window.yesShownAt`)
		// The page handles the press before Yes shows as pressable (in
		// order): a press it took closes the question at once.
		waitJS(t, ctx, `(() => { const y = document.querySelector('#tokens [data-token] button.confirm-revoke'); return !y || y.getAttribute("aria-disabled") === "false"; })()`)
		asking := evalJS[bool](t, ctx, `document.querySelector('#tokens [data-token] button.confirm-revoke') !== null`)
		switch {
		case asking:
			secret = candidate
		case after < early:
			t.Fatalf("Yes pressed %.0f ms after it showed was taken: the question closed", after)
		default:
			t.Logf("doubtful: Yes was pressed %.0f ms after it showed, late enough to be taken: asking again", after)
			lateRevoked++
			waitJS(t, ctx, fmt.Sprintf(`document.querySelectorAll('#tokens [data-token] .badge-revoked').length === %d`, lateRevoked))
		}
	}
	if s, b := e.invite(t, secret, "while-asking@example.com"); s != http.StatusCreated {
		t.Errorf("while the question is open the token is refused: %d %s", s, b)
	}
	waitJS(t, ctx, `document.querySelector('#tokens [data-token] button.cancel-revoke') !== null`)
	do(t, ctx, chromedp.Click(chromedp.CSS(row+` button.cancel-revoke`)))
	waitJS(t, ctx, `document.querySelector('#tokens [data-token] button.confirm-revoke') === null && document.querySelector('#tokens [data-token] button.revoke') !== null`)
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#tokens [data-token] .badge-revoked').length`); n != lateRevoked {
		t.Errorf("after Keep %d rows show revoked, want %d", n, lateRevoked)
	}
	waitJS(t, ctx, `document.activeElement?.matches('#tokens [data-token] button.revoke') || document.activeElement?.closest('#tokens') !== null`)
	if s, b := e.invite(t, secret, "kept@example.com"); s != http.StatusCreated {
		t.Fatalf("after Keep the token is refused: %d %s", s, b)
	}
	if s, b := e.bearer(t, secret, "GET", api.TestersPath(e.extID), ""); s != http.StatusOK {
		t.Fatalf("after Keep reading is refused: %d %s", s, b)
	}
	for _, tok := range e.tokens(t) {
		if tok.Name == name && tok.RevokedAt != "" {
			t.Errorf("after Keep the API lists it revoked: %+v", tok)
		}
	}
}

// Revoke, then Yes: that token gets 401 at once, the other keeps working,
// the row shows a revoked badge, and the audit trail names both changes.
func TestBBTokPageRevokeThenYes(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx
	gone := makeToken(t, ctx, "doomed", "testers")
	done(t, ctx)
	stays := makeToken(t, ctx, "survivor")
	done(t, ctx)
	waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length === 2`)
	// Used once, so the row's "last used" has something to say.
	if s, b := e.invite(t, gone, "before@example.com"); s != http.StatusCreated {
		t.Fatalf("inviting before the revoke: %d %s", s, b)
	}

	doomedRow := `[...document.querySelectorAll('#tokens [data-token]')].find(r => r.textContent.includes("doomed"))`
	id := evalJS[string](t, ctx, doomedRow+`.getAttribute("data-token")`)
	sel := fmt.Sprintf(`#tokens [data-token=%q]`, id)
	do(t, ctx, chromedp.Click(chromedp.CSS(sel+` button.revoke`)))
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s button.confirm-revoke[aria-disabled="false"]') !== null`, sel))
	do(t, ctx, chromedp.Click(chromedp.CSS(sel+` button.confirm-revoke[aria-disabled="false"]`)))
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s .badge-revoked') !== null`, sel))
	if s, b := e.invite(t, gone, "after@example.com"); s != http.StatusUnauthorized {
		t.Errorf("the revoked token inviting: %d %s, want 401", s, b)
	}
	if s, b := e.bearer(t, gone, "GET", api.PathToken, ""); s != http.StatusUnauthorized {
		t.Errorf("the revoked token's GET /api/token: %d %s, want 401", s, b)
	}
	if s, b := e.bearer(t, stays, "GET", api.TestersPath(e.extID), ""); s != http.StatusOK {
		t.Errorf("the other token after the revoke: %d %s", s, b)
	}
	if txt := text(t, ctx, sel); !strings.Contains(strings.ToLower(txt), "revoked") {
		t.Errorf("the revoked row reads %q", txt)
	}
	if evalJS[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s button.revoke') !== null`, sel)) {
		t.Error("the revoked row still offers Revoke")
	}
	survivor := `[...document.querySelectorAll('#tokens [data-token]')].find(r => r.textContent.includes("survivor"))`
	if evalJS[bool](t, ctx, survivor+`.querySelector('.badge-revoked') !== null`) {
		t.Error("revoking one token shows the other revoked")
	}
	for _, tok := range e.tokens(t) {
		if (tok.Name == "doomed") != (tok.RevokedAt != "") {
			t.Errorf("the API lists %+v", tok)
		}
	}

	// The audit trail on the same page names both changes, and the token.
	admin := e.d.Admins[0].Email
	audit := `document.querySelector("#audit-list")?.innerText ?? ""`
	waitJS(t, ctx, fmt.Sprintf(`(() => { const a = %s; return a.includes("made the access token") && a.includes("revoked the access token") && a.includes("doomed") && a.includes(%q); })()`, audit, admin))
	// The invite made with the token names the token in the trail.
	if a := evalJS[string](t, ctx, audit); !strings.Contains(a, `token "doomed"`) {
		t.Logf("doubtful: the audit trail does not name the token that invited (README: token \"nightly\" of …): %q", a)
	}
}

// The whole flow by keyboard alone: Tab to the fields, Space to tick a box,
// arrows to pick a lifetime, Enter to submit, Done and Revoke by keys.
func TestBBTokPageKeyboardOnly(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx
	// A click on the section's heading (not a control) sets where Tab starts.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#tokens-title`)))
	tabTo := func(want string) {
		t.Helper()
		for range 40 {
			do(t, ctx, chromedp.KeyEvent(kb.Tab))
			if evalJS[bool](t, ctx, `!!document.activeElement?.matches(`+fmt.Sprintf("%q", want)+`)`) {
				return
			}
		}
		t.Fatalf("Tab never reached %s (at %s)", want, evalJS[string](t, ctx, `document.activeElement?.outerHTML.slice(0, 200) ?? ""`))
	}
	tabTo(`#token-name`)
	do(t, ctx, chromedp.KeyEvent("keyboard only"))
	do(t, ctx, chromedp.KeyEvent(kb.Tab))
	waitJS(t, ctx, `document.activeElement?.id === "scope-read"`)
	do(t, ctx, chromedp.KeyEvent(kb.Tab))
	waitJS(t, ctx, `document.activeElement?.id === "scope-testers"`)
	do(t, ctx, chromedp.KeyEvent(" "))
	waitJS(t, ctx, `document.querySelector('#scope-testers').checked`)
	tabTo(`#token-lifetime`)
	// Two steps down: 90 days → 365 days (from 30 days: → 365 too? no, → 90).
	start := evalJS[string](t, ctx, `document.querySelector('#token-lifetime').value`)
	do(t, ctx, chromedp.KeyEvent(kb.End))
	waitJS(t, ctx, `document.querySelector('#token-lifetime').value === "0"`)
	do(t, ctx, chromedp.KeyEvent(kb.ArrowUp))
	waitJS(t, ctx, `document.querySelector('#token-lifetime').value === "365"`)
	t.Logf("the lifetime started at %s days", start)
	tabTo(`#create-token`)
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	secret := secretShown(t, ctx)
	waitJS(t, ctx, `document.activeElement?.id === "token-secret"`)
	toks := e.tokens(t)
	if len(toks) != 1 || toks[0].Name != "keyboard only" || strings.Join(toks[0].Scopes, ",") != "read,testers" {
		t.Fatalf("the keyboard made %+v", toks)
	}
	if exp, err := time.Parse(time.RFC3339, toks[0].ExpiresAt); err != nil || exp.Before(time.Now().Add(364*24*time.Hour)) || exp.After(time.Now().Add(366*24*time.Hour)) {
		t.Errorf("365 days picked; the token expires %q", toks[0].ExpiresAt)
	}
	tabTo(`#token-done`)
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.querySelector('#token-secret') === null && document.activeElement?.id === "token-name"`)
	if s, b := e.invite(t, secret, "keys@example.com"); s != http.StatusCreated {
		t.Fatalf("inviting with the keyboard's token: %d %s", s, b)
	}

	// "until revoked", by keys, then the lifetime picked is shown.
	do(t, ctx, chromedp.KeyEvent("forever"))
	tabTo(`#token-lifetime`)
	do(t, ctx, chromedp.KeyEvent(kb.End))
	waitJS(t, ctx, `document.querySelector('#token-lifetime').value === "0"`)
	tabTo(`#create-token`)
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	forever := secretShown(t, ctx)
	for _, tok := range e.tokens(t) {
		if tok.Name == "forever" && tok.ExpiresAt != "" {
			t.Errorf("an until-revoked token expires %s", tok.ExpiresAt)
		}
	}
	tabTo(`#token-done`)
	do(t, ctx, chromedp.KeyEvent(" "))
	waitJS(t, ctx, `document.querySelector('#token-secret') === null`)

	// Revoke by keys: Tab to the forever row's Revoke, Enter, wait, Enter.
	forRow := `[...document.querySelectorAll('#tokens [data-token]')].find(r => r.textContent.includes("forever"))`
	id := evalJS[string](t, ctx, forRow+`.getAttribute("data-token")`)
	sel := fmt.Sprintf(`#tokens [data-token=%q]`, id)
	tabTo(sel + ` button.revoke`)
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.activeElement?.classList.contains("confirm-revoke")`)
	waitJS(t, ctx, yesReady)
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s .badge-revoked') !== null`, sel))
	if s, b := e.bearer(t, forever, "GET", api.TestersPath(e.extID), ""); s != http.StatusUnauthorized {
		t.Errorf("the token revoked by keys: %d %s, want 401", s, b)
	}
	// The focus is somewhere a keyboard user can go on from.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.activeElement !== null && document.activeElement !== document.body`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(patient(2*time.Second)))); err != nil {
		t.Errorf("after revoking by keys the focus is lost to the page's body (%v)", err)
	}
}

// The secret shows only in its own field: never in a list row, never in the
// page once Done is pressed; the page is accessible while it shows, and
// while a refusal shows.
func TestBBTokPageSecretOnlyOnceAndAccessible(t *testing.T) {
	t.Parallel()
	e := bbtOpen(t)
	ctx := e.ctx

	do(t, ctx, chromedp.Click(chromedp.CSS(`#create-token`)))
	emptyNameRefused(t, ctx, "Make token clicked with an empty name")
	checkAccessible(t, ctx, "the access tokens' refusal of an empty name")

	secret := makeToken(t, ctx, "a11y", "settings")
	waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length === 1`)
	checkAccessible(t, ctx, "the access token's secret shown once")
	if evalJS[bool](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('#tokens [data-token]')].some(r => r.outerHTML.includes(%q))`, secret)) {
		t.Error("a list row holds the secret")
	}
	if n := evalJS[int](t, ctx, fmt.Sprintf(`document.documentElement.outerHTML.split(%q).length - 1`, secret)); n > 1 {
		t.Errorf("the secret is in the page's markup %d times", n)
	}
	// The secret field is labelled and not editable by accident.
	if lbl := evalJS[string](t, ctx, `(() => { const f = document.querySelector('#token-secret'); return (f.labels?.[0]?.innerText ?? f.getAttribute('aria-label') ?? "") + (f.readOnly ? "" : " (editable)"); })()`); lbl == "" || strings.Contains(lbl, "editable") {
		t.Errorf("the secret's field: label %q", lbl)
	}
	// The row says its name, scopes, created, expires and last used.
	row := strings.ToLower(text(t, ctx, `#tokens [data-token]`))
	for _, want := range []string{"a11y", "read", "settings", "never"} {
		if !strings.Contains(row, want) {
			t.Errorf("the new token's row %q lacks %q", row, want)
		}
	}
	done(t, ctx)
	if where := evalJS[string](t, ctx, secretAnywhere(secret)); where != "" {
		t.Errorf("after Done the secret is in the page (%s)", where)
	}
	// Once used, the row's "last used" changes after a reload.
	if s, b := e.bearer(t, secret, "GET", api.TestersPath(e.extID), ""); s != http.StatusOK {
		t.Fatalf("reading with the token: %d %s", s, b)
	}
	do(t, ctx, chromedp.Reload())
	bbtLoad(t, ctx, e.settingsURL())
	waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length === 1`)
	used := text(t, ctx, `#tokens [data-token]`)
	toks := e.tokens(t)
	if len(toks) != 1 || toks[0].LastUsedAt == "" {
		t.Errorf("after a use the API's token reads %+v", toks)
	}
	if strings.Count(strings.ToLower(used), "never") >= strings.Count(row, "never") {
		t.Errorf("after a use the row still reads %q (before: %q)", used, row)
	}
	if where := evalJS[string](t, ctx, secretAnywhere(secret)); where != "" {
		t.Errorf("after a reload the secret is in the page (%s)", where)
	}
	checkAccessible(t, ctx, "the access tokens' list after Done")
}
