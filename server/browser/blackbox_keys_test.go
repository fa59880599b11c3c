package browser_test

// Black-box tests of issue 18 ("Keys and testers the way teams work") as
// people meet it in the browser. They act only through the DevTools input
// domain (mouse clicks at an element's centre, typed keys, dropped files)
// and navigation; JavaScript only reads the page.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/storetest"
)

// bbkPrivateTab opens a tab in a browser context of its own: another
// person's browser, with its own cookies.
func bbkPrivateTab(t *testing.T) context.Context {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("opening a private tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	t.Cleanup(func() {
		if t.Failed() {
			if path, err := screenshot(tab, t.Name()+"-private"); err == nil {
				t.Logf("screenshot of the private tab: %s", path)
			}
		}
		cancel()
		cancelTab()
	})
	return ctx
}

// bbkWait waits up to 20 s for expr, and says what the page shows if it
// never holds.
func bbkWait(t *testing.T, ctx context.Context, expr, msg string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(30*time.Millisecond), chromedp.WithPollingTimeout(patient(20*time.Second)))); err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + "\n" + (document.querySelector("main")?.innerText ?? document.body.innerText)`))
		t.Fatalf("%s (waited %v for %s: %v); the page shows:\n%s", msg, patient(20*time.Second), expr, err, shown)
	}
}

// bbkType clicks a field with the mouse and types text on the keyboard.
func bbkType(t *testing.T, ctx context.Context, sel, text string) {
	t.Helper()
	bbkClickIntoField(t, ctx, sel)
	do(t, ctx, chromedp.KeyEvent(text))
}

// bbkClickIntoField clicks the field sel with the mouse until it has the
// caret, as a person looks for it before typing: a section that loads
// above the field can push it down between the look that aims and the
// click (seen on a busy machine: the click landed beside the webhook URL
// field, and the keys typed after it went nowhere).
func bbkClickIntoField(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	find := fmt.Sprintf(`document.querySelector(%q)`, sel)
	focused := `document.activeElement === ` + find
	for try := 1; ; try++ {
		bbkClickFound(t, ctx, sel, find)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](focused, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(2*time.Second)))
		if err == nil {
			return
		}
		if try == 3 {
			active, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement?.outerHTML.slice(0, 200) ?? "nothing"`))
			t.Fatalf("three clicks on %s did not give it the caret; the focus is on %s", sel, active)
		}
		t.Logf("a click on %s did not give it the caret (try %d): clicking again", sel, try)
	}
}

func bbkPress(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	do(t, ctx, chromedp.KeyEvent(key))
}

type bbkSpot struct {
	X   float64 `json:"x"`
	Y   float64 `json:"y"`
	H   float64 `json:"h"`
	Hit bool    `json:"hit"`
}

// bbkClickFound clicks, with the mouse, the element the JavaScript
// expression find reads from the page: it wheels the page until the
// element is in view and nothing covers its centre.
func bbkClickFound(t *testing.T, ctx context.Context, what, find string) {
	t.Helper()
	x, y := bbkFind(t, ctx, what, find)
	do(t, ctx, chromedp.MouseClickXY(x, y))
}

// bbkFind wheels the page until the element the JavaScript expression find
// reads is in view, standing still, and nothing covers its centre, which
// it returns: where a hand would aim.
func bbkFind(t *testing.T, ctx context.Context, what, find string) (x, y float64) {
	t.Helper()
	locate := `(() => { const el = (` + find + `); if (!el || !el.checkVisibility()) return null;
		const r = el.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
		const at = document.elementFromPoint(x, y);
		return {x, y, h: innerHeight, hit: !!at && (at === el || el.contains(at))}; })()`
	deadline := time.Now().Add(20 * time.Second)
	var last *bbkSpot
	for {
		spot, err := chromedp.Run(ctx, chromedp.Evaluate[*bbkSpot](locate))
		if err != nil {
			t.Fatalf("looking for %s: %v", what, err)
		}
		switch {
		case spot != nil && (spot.Y < 1 || spot.Y > spot.H-1):
			if err := wheel(ctx, 400, spot.H/2, spot.Y-spot.H/2); err != nil {
				t.Fatalf("turning the wheel towards %s: %v", what, err)
			}
		case spot != nil && spot.Hit && last != nil && *last == *spot:
			// A hand aims at a target that stands still: not one still
			// gliding under a smooth scroll, or pushed down by a section
			// that has just loaded above it.
			return spot.X, spot.Y
		}
		last = spot
		if time.Now().After(deadline) {
			shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main")?.innerText ?? ""`))
			t.Fatalf("%s never showed where a hand could click it (%+v); the page shows:\n%s", what, spot, shown)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bbkCLIKey makes a named key with `betaport key create` and returns the
// key file's path.
func bbkCLIKey(t *testing.T, m *cli.Main, extID int64, label string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.json")
	var stdout, stderr strings.Builder
	if code := cli.Run(context.Background(), []string{"key", "create", "--extension", strconv.FormatInt(extID, 10), "--label", label,
		"--out", path, "--data", m.Config.Data}, &stdout, &stderr); code != 0 {
		t.Fatalf("betaport key create: exit %d: %s", code, stderr.String())
	}
	return path
}

func bbkKeyOf(t *testing.T, path string) api.ServiceKey {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := api.ParseKeyFile(raw)
	if err != nil {
		t.Fatalf("%s is not a key file: %v", path, err)
	}
	return k
}

func bbkTester(t *testing.T, m *cli.Main, extID int64, email string) *betaport.Tester {
	t.Helper()
	tt, err := m.Store.FindTesterByEmail(context.Background(), extID, email)
	if err != nil {
		t.Fatalf("tester %s: %v", email, err)
	}
	return tt
}

// bbkShownLink is the invite link the testers page shows after an invite,
// a new link or a restore, once it differs from before.
func bbkShownLink(t *testing.T, ctx context.Context, before string) string {
	t.Helper()
	bbkWait(t, ctx, fmt.Sprintf(`(() => { const v = document.querySelector("#invite-url")?.value ?? ""; return v.includes("/t/") && v !== %q; })()`, before),
		"the page never showed a new invite link")
	return evalJS[string](t, ctx, `document.querySelector("#invite-url").value`)
}

func bbkRow(id int64) string { return fmt.Sprintf(`#testers [data-tester="%d"]`, id) }

func bbkRowText(t *testing.T, ctx context.Context, id int64) string {
	t.Helper()
	return evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, bbkRow(id)))
}

// bbkSignsIn opens link in a browser of its own and reports whether it
// signed a tester in (the builds page) and where it ended.
func bbkSignsIn(t *testing.T, link string) (bool, string) {
	t.Helper()
	ctx := bbkPrivateTab(t)
	net := bootRecord(t, ctx)
	do(t, ctx, chromedp.Navigate(link))
	bbkWait(t, ctx, `!location.pathname.startsWith("/t/") && !!document.querySelector('.shell[data-app="client"] main h1')`, "the link led to no page")
	// A redirect the app makes on its own, on what the service answers:
	// every request the page made is answered, and no other follows.
	net.waitIdle(t, ctx, 300*time.Millisecond, patient(20*time.Second))
	path := evalJS[string](t, ctx, `location.pathname`)
	return path == "/builds", path
}

// TestBlackBoxKeysAdminDropsOnlyAZip: a signed-in admin drops only a zip on
// the upload panel: it is published, on top of the list and in the header,
// without a key file; a pipeline's key made with the command line still
// publishes afterwards, and the open page shows that too.
func TestBlackBoxKeysAdminDropsOnlyAZip(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#drop-zone`)), chromedp.Evaluate[chromedp.Void](`window.__bbkSameDocument = true`))
	next := lastBundle(t, m.Store, ext.ID) + 1

	zipBytes := extensionZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.4.0"}`,
		"background.js": "console.log('9.4.0')\n",
	})
	dropFiles(t, ctx, pageFile{Name: "tab-tamer-9.4.0.zip", Type: "application/zip", Data: zipBytes})
	bbkWait(t, ctx, `document.querySelector("#upload-result") !== null`, "dropping only the zip published nothing")
	if got := text(t, ctx, `#upload-result-title`); !strings.Contains(got, fmt.Sprintf("#%d", next)) || !strings.Contains(got, "9.4.0") {
		t.Fatalf("the panel says %q, want bundle #%d, version 9.4.0, published", got, next)
	}
	bbkWait(t, ctx, fmt.Sprintf(`document.querySelector("#bundle-rows [data-bundle]")?.dataset.bundle === "%d"`, next),
		"the new bundle never came on top of the list")
	bbkWait(t, ctx, fmt.Sprintf(`document.querySelector("#current-bundle")?.textContent.trim() === "#%d"`, next),
		"the header never showed the new bundle as the one testers get")
	if e, err := m.Store.FindExtension(context.Background(), ext.ID); err != nil || e.CurrentBundle != next {
		t.Fatalf("the service serves %+v (%v), want bundle #%d current", e, err, next)
	}
	if b, err := m.Store.FindBundle(context.Background(), ext.ID, next); err != nil || b.Version != "9.4.0" {
		t.Fatalf("bundle #%d is %+v (%v), want version 9.4.0", next, b, err)
	}

	// The pipeline's key, made with the command line, still publishes;
	// the open page follows.
	keyPath := bbkCLIKey(t, m, ext.ID, "GitHub Actions")
	if n := submitTo(t, m.URL(), keyPath, "Tab Tamer", "9.4.1"); n != next+1 {
		t.Fatalf("the pipeline published #%d, want #%d", n, next+1)
	}
	bbkWait(t, ctx, fmt.Sprintf(`document.querySelector("#bundle-rows [data-bundle]")?.dataset.bundle === "%d" && document.querySelector("#current-bundle")?.textContent.trim() === "#%d"`, next+1, next+1),
		"the pipeline's bundle never showed on the open page")
	if !evalJS[bool](t, ctx, `window.__bbkSameDocument === true`) {
		t.Fatal("the page was reloaded")
	}
}

// TestBlackBoxKeysTestersRevokeAndRestore: on the testers page Revoke asks
// first (Keep leaves the tester), then revokes; Restore makes a new link
// and the row is invited again, the invite's age shown; an invite of a
// revoked e-mail offers the restore, and accepting it brings them back.
func TestBlackBoxKeysTestersRevokeAndRestore(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	bg := context.Background()
	team, err := m.Store.FindTeam(bg, d.Extensions[0].TeamID)
	if err != nil {
		t.Fatal(err)
	}
	ext := storetest.MustExtension(t, m.Store, team, "Keys Lab")
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#invite-email`)))

	// Two testers invited with the form; Grace opens her link.
	invite := func(email, name, before string) string {
		t.Helper()
		bbkType(t, ctx, `#invite-email`, email)
		bbkType(t, ctx, `#invite-name`, name)
		bbkPress(t, ctx, kb.Enter)
		return bbkShownLink(t, ctx, before)
	}
	adaLink := invite("ada@example.com", "Ada Lovelace", "")
	graceLink := invite("grace@example.com", "Grace Hopper", adaLink)
	ada, grace := bbkTester(t, m, ext.ID, "ada@example.com"), bbkTester(t, m, ext.ID, "grace@example.com")
	bbkWait(t, ctx, fmt.Sprintf(`!!document.querySelector(%q) && !!document.querySelector(%q)`, bbkRow(ada.ID), bbkRow(grace.ID)), "the invited testers never showed in the list")
	age := regexp.MustCompile(`(?i)today|just now|ago|minute|second|hour`)
	if row := bbkRowText(t, ctx, ada.ID); !strings.Contains(strings.ToLower(row), "invited") || !age.MatchString(row) {
		t.Errorf("a tester invited just now and never joined shows %q: want invited, and how old the invite is", row)
	}
	if in, where := bbkSignsIn(t, graceLink); !in {
		t.Fatalf("Grace's link led to %s, not her builds", where)
	}
	if g := bbkTester(t, m, ext.ID, "grace@example.com"); g.Status != betaport.TesterActive {
		t.Fatalf("after opening her link Grace is %s", g.Status)
	}
	// The admin refreshes the list and sees her joined.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#refresh-testers`)))
	bbkWait(t, ctx, fmt.Sprintf(`/active/i.test(document.querySelector(%q)?.innerText ?? "")`, bbkRow(grace.ID)), "after a refresh Grace's row never said active")

	// Revoke asks first; Keep leaves Grace as she was.
	testers := trackRequests(t, ctx, api.TestersPath(ext.ID))
	do(t, ctx, chromedp.Click(chromedp.CSS(bbkRow(grace.ID)+` button.revoke`)))
	bbkWait(t, ctx, fmt.Sprintf(`!!document.querySelector(%q)`, bbkRow(grace.ID)+` button.cancel-revoke`), "Revoke asked nothing")
	if g := bbkTester(t, m, ext.ID, "grace@example.com"); g.Status != betaport.TesterActive {
		t.Fatalf("the first click on Revoke revoked Grace (%s) before she was confirmed", g.Status)
	}
	question := evalJS[string](t, ctx, fmt.Sprintf(`(() => { const g = document.querySelector(%q); return (g.closest("[role=group], [role=dialog], [role=alertdialog]")?.getAttribute("aria-label") ?? "") + " " + g.closest("[role=group], [role=dialog], [role=alertdialog], [data-tester]").innerText; })()`, bbkRow(grace.ID)+` button.cancel-revoke`))
	if !strings.Contains(question, "grace@example.com") {
		t.Errorf("the confirmation reads %q: it does not say whom it revokes", question)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(bbkRow(grace.ID)+` button.cancel-revoke`)))
	bbkWait(t, ctx, fmt.Sprintf(`!!document.querySelector(%q) && !document.querySelector(%q)`, bbkRow(grace.ID)+` button.revoke`, bbkRow(grace.ID)+` button.cancel-revoke`),
		"Keep did not put the Revoke button back")
	// A revoke, had Revoke or Keep sent one, has been answered.
	testers.waitSettled(t, 300*time.Millisecond, patient(10*time.Second))
	if g := bbkTester(t, m, ext.ID, "grace@example.com"); g.Status != betaport.TesterActive {
		t.Fatalf("Keep revoked Grace: %s", g.Status)
	}
	if row := bbkRowText(t, ctx, grace.ID); !strings.Contains(strings.ToLower(row), "active") {
		t.Fatalf("after Keep Grace's row reads %q", row)
	}

	// Confirmed, Revoke revokes.
	do(t, ctx, chromedp.Click(chromedp.CSS(bbkRow(grace.ID)+` button.revoke`)))
	do(t, ctx, chromedp.Click(chromedp.CSS(bbkRow(grace.ID)+` button.confirm-revoke[aria-disabled="false"]`)))
	bbkWait(t, ctx, fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? "").toLowerCase().includes("revoked")`, bbkRow(grace.ID)), "the row never said revoked")
	// The row says revoked at once (optimistically); the server's answer
	// may still be on its way.
	waitFor(t, func() bool { return bbkTester(t, m, ext.ID, "grace@example.com").Status == betaport.TesterRevoked },
		"the confirmation to revoke Grace in the store")

	// Restore: a new link, the same tester invited again.
	do(t, ctx, chromedp.Click(chromedp.CSS(bbkRow(grace.ID)+` button.restore`)))
	newLink := bbkShownLink(t, ctx, graceLink)
	if newLink == graceLink {
		t.Fatal("Restore showed the old link")
	}
	if note := evalJS[string](t, ctx, `document.querySelector("#invite-result")?.innerText ?? ""`); !strings.Contains(note, "grace@example.com") {
		t.Errorf("the new link is shown with %q: it does not say whose it is", note)
	}
	bbkWait(t, ctx, fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? "").toLowerCase().includes("invited")`, bbkRow(grace.ID)), "after Restore the row never said invited")
	if row := bbkRowText(t, ctx, grace.ID); !age.MatchString(row) {
		t.Errorf("the restored tester's row reads %q: want how old the invite is", row)
	}
	if g := bbkTester(t, m, ext.ID, "grace@example.com"); g.ID != grace.ID || g.Status != betaport.TesterInvited {
		t.Fatalf("after Restore Grace is %+v, want the same record (%d), invited", g, grace.ID)
	}
	if in, where := bbkSignsIn(t, graceLink); in {
		t.Errorf("Grace's link of before the revoke still signs her in (%s)", where)
	}
	if in, where := bbkSignsIn(t, newLink); !in {
		t.Fatalf("the link Restore showed led to %s, not Grace's builds", where)
	}

	// Ada, revoked before she ever joined, is invited again by e-mail: the
	// page offers the restore, and accepting it brings her back.
	do(t, ctx, chromedp.Click(chromedp.CSS(bbkRow(ada.ID)+` button.revoke`)))
	do(t, ctx, chromedp.Click(chromedp.CSS(bbkRow(ada.ID)+` button.confirm-revoke[aria-disabled="false"]`)))
	bbkWait(t, ctx, fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? "").toLowerCase().includes("revoked")`, bbkRow(ada.ID)), "Ada's row never said revoked")
	bbkType(t, ctx, `#invite-email`, "ada@example.com")
	bbkPress(t, ctx, kb.Enter)
	bbkWait(t, ctx, `!!document.querySelector("#restore-offer")`, "an invite of a revoked e-mail offered no restore")
	if said := evalJS[string](t, ctx, `document.querySelector("#invite-error")?.innerText ?? document.querySelector("#invite-form").innerText`); !strings.Contains(said, "ada@example.com") || !strings.Contains(strings.ToLower(said), "revoked") {
		t.Errorf("the offer reads %q: want the e-mail and that it was revoked", said)
	}
	if a := bbkTester(t, m, ext.ID, "ada@example.com"); a.Status != betaport.TesterRevoked {
		t.Fatalf("the refused invite changed Ada to %s", a.Status)
	}
	shown := evalJS[string](t, ctx, `document.querySelector("#invite-url")?.value ?? ""`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#restore-offer`)))
	adaNew := bbkShownLink(t, ctx, shown)
	bbkWait(t, ctx, fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? "").toLowerCase().includes("invited")`, bbkRow(ada.ID)), "after the restore Ada's row never said invited")
	if a := bbkTester(t, m, ext.ID, "ada@example.com"); a.ID != ada.ID || a.Status != betaport.TesterInvited || a.Name != "Ada Lovelace" {
		t.Fatalf("after the offered restore Ada is %+v, want the same record, invited", a)
	}
	if n := evalJS[int](t, ctx, `[...document.querySelectorAll("#testers [data-tester]")].filter(r => r.innerText.includes("ada@example.com")).length`); n != 1 {
		t.Errorf("Ada shows in %d rows after the restore, want 1", n)
	}
	if in, where := bbkSignsIn(t, adaLink); in {
		t.Errorf("Ada's first link still signs her in (%s)", where)
	}
	if in, where := bbkSignsIn(t, adaNew); !in {
		t.Fatalf("Ada's new link led to %s", where)
	}
}

// TestBlackBoxKeysSettingsKeysAndAudit: on the settings page a label typed
// and Enter make a key whose key.json downloads and publishes; another key
// is revoked after its confirmation, the rest keep working; the audit list
// shows both changes and who made them.
func TestBlackBoxKeysSettingsKeysAndAudit(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := d.Admins[0].Email
	laptopPath := bbkCLIKey(t, m, ext.ID, "release laptop")
	laptop := bbkKeyOf(t, laptopPath)
	ctx := adminTab(t, m, d)
	downloads := allowDownloads(t, ctx)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))

	// A label, then Enter.
	bbkType(t, ctx, `#key-label`, "GitHub Actions")
	bbkPress(t, ctx, kb.Enter)
	keyPath := filepath.Join(downloads, "key.json")
	var raw []byte
	for deadline := time.Now().Add(20 * time.Second); ; {
		var err error
		if raw, err = os.ReadFile(keyPath); err == nil && json.Valid(raw) {
			break
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(downloads)
			t.Fatalf("Enter in the label field downloaded no key.json (%v); the folder holds %v", err, entries)
		}
		time.Sleep(100 * time.Millisecond)
	}
	gha, bare, err := api.ParseKeyFile(raw)
	if err != nil || bare || gha.ExtensionID != strconv.FormatInt(ext.ID, 10) {
		t.Fatalf("the downloaded key.json, %s, is not a key file of extension %d (%v)", raw, ext.ID, err)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("main").innerText`); strings.Contains(got, gha.APIKey) {
		t.Error("the page shows the key's secret")
	}
	next := lastBundle(t, m.Store, ext.ID) + 1
	if n := submitTo(t, m.URL(), keyPath, "Tab Tamer", "9.5.0"); n != next {
		t.Fatalf("the downloaded key published #%d, want #%d", n, next)
	}
	if s := requestUpload(t, m.URL(), laptop); s != http.StatusOK {
		t.Fatalf("making a key in the browser broke the other key: %d", s)
	}

	// Both keys are listed, with their labels and who made them. A key's
	// row is the largest part of the list that names it and no other key.
	labels := []string{"GitHub Actions", "release laptop"}
	rowOf := func(label string) string {
		return fmt.Sprintf(`((label, labels) => { const list = document.querySelector("#keys-list"); if (!list) return null;
			let el = [...list.querySelectorAll("*")].find(e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.includes(label)));
			if (!el) return null;
			while (el.parentElement && el.parentElement !== list && !labels.some(o => o !== label && el.parentElement.innerText.includes(o))) el = el.parentElement;
			return el; })(%q, %s)`, label, mustJSON(labels))
	}
	revokeIn := func(row string) string {
		return `[...((` + row + `)?.querySelectorAll("button") ?? [])].find(b => b.checkVisibility() && /revoke/i.test(b.getAttribute("aria-label") || b.textContent))`
	}
	bbkWait(t, ctx, `(document.querySelector("#keys-list")?.innerText ?? "").includes("GitHub Actions") && document.querySelector("#keys-list").innerText.includes("release laptop")`,
		"the settings page never listed the extension's keys")
	if row := evalJS[string](t, ctx, `(`+rowOf("GitHub Actions")+`)?.innerText ?? ""`); !strings.Contains(row, admin) {
		t.Errorf("the new key's row reads %q: want who made it (%s)", row, admin)
	}
	if row := evalJS[string](t, ctx, `(`+rowOf("release laptop")+`)?.innerText ?? ""`); !strings.Contains(row, betaport.ActorCommandLine) {
		t.Errorf("the command line's key's row reads %q: want who made it (%s)", row, betaport.ActorCommandLine)
	}

	// Revoke the laptop's key: a confirmation first.
	buttonsJS := `[...document.querySelectorAll("button")].filter(b => b.checkVisibility()).map(b => b.getAttribute("aria-label") || b.textContent.trim())`
	before := evalJS[[]string](t, ctx, buttonsJS)
	bbkClickFound(t, ctx, "the Revoke button of the release laptop key", revokeIn(rowOf("release laptop")))
	confirmJS := fmt.Sprintf(`[...document.querySelectorAll("button")].filter(b => b.checkVisibility() && b.getAttribute("aria-disabled") !== "true" && !%s.includes(b.getAttribute("aria-label") || b.textContent.trim()) &&
		/revoke|yes|confirm/i.test(b.getAttribute("aria-label") || b.textContent) && !/keep|cancel|^no\b/i.test(b.getAttribute("aria-label") || b.textContent))[0]`, mustJSON(before))
	bbkWait(t, ctx, `!!(`+confirmJS+`)`, "Revoke asked nothing before revoking the key")
	if s := requestUpload(t, m.URL(), laptop); s != http.StatusOK {
		t.Fatalf("the key was revoked before it was confirmed: %d", s)
	}
	bbkClickFound(t, ctx, "the confirmation of the revoke", confirmJS)
	for deadline := time.Now().Add(10 * time.Second); requestUpload(t, m.URL(), laptop) != http.StatusUnauthorized; {
		if time.Now().After(deadline) {
			t.Fatal("the confirmed revoke left the laptop's key working")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := requestUpload(t, m.URL(), gha); s != http.StatusOK {
		t.Fatalf("revoking one key broke the other: %d", s)
	}
	// The row says revoked, or offers no Revoke any more; the other key's
	// row still does.
	bbkWait(t, ctx, `(() => { const row = `+rowOf("release laptop")+`; return !row || /revoked/i.test(row.innerText) || !(`+revokeIn("row")+`); })()`,
		"the revoked key's row still offers to revoke it")
	if !evalJS[bool](t, ctx, `!!(`+revokeIn(rowOf("GitHub Actions"))+`)`) {
		t.Error("after revoking the laptop's key the GitHub Actions key is no longer offered for revoking")
	}

	// The audit trail lists both changes, and who made them.
	bbkWait(t, ctx, fmt.Sprintf(`(() => { const a = document.querySelector("#audit-list")?.innerText ?? "";
		return a.includes("GitHub Actions") && a.includes("release laptop") && a.includes(%q) && /revoked/i.test(a) && /created|made|new/i.test(a); })()`, admin),
		"the audit list never showed the key made and the key revoked, by whom")
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestBlackBoxKeysRevokedTesterSeesAccessEnded: a tester revoked on the
// testers page who opens their old invite link, in their own browser or a
// fresh one, sees that their access ended and whom to ask, with no sign-in
// form.
func TestBlackBoxKeysRevokedTesterSeesAccessEnded(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	bg := context.Background()
	ext := d.Extensions[0]
	team, err := m.Store.FindTeam(bg, ext.TeamID)
	if err != nil {
		t.Fatal(err)
	}
	token := credential.NewToken()
	lin := &betaport.Tester{ExtensionID: ext.ID, Email: "lin@example.com", Name: "Lin"}
	if err := m.Store.InviteTester(bg, lin, storetest.Link(credential.HashToken(token)), d.Admins[0].Email); err != nil {
		t.Fatal(err)
	}
	link := m.URL() + api.InvitePrefix + token
	testerTab := bbkPrivateTab(t)
	do(t, testerTab, chromedp.Navigate(link))
	waitLocation(t, testerTab, m.URL()+"/builds")

	// The admin revokes Lin on the testers page.
	admin := adminTab(t, m, d)
	openApp(t, admin, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	do(t, admin, chromedp.Click(chromedp.CSS(bbkRow(lin.ID)+` button.revoke`)))
	do(t, admin, chromedp.Click(chromedp.CSS(bbkRow(lin.ID)+` button.confirm-revoke[aria-disabled="false"]`)))
	for deadline := time.Now().Add(10 * time.Second); ; {
		if tt, err := m.Store.FindTester(bg, lin.ID); err == nil && tt.Status == betaport.TesterRevoked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the confirmed revoke never revoked Lin")
		}
		time.Sleep(100 * time.Millisecond)
	}

	check := func(ctx context.Context, how string) {
		t.Helper()
		waitLocation(t, ctx, m.URL()+"/ended")
		bbkWait(t, ctx, `!!document.querySelector('.shell[data-app="client"] main h1')`, how+": the page never showed")
		page := evalJS[string](t, ctx, `document.querySelector("main").innerText`)
		if !regexp.MustCompile(`(?i)access.*ended|ended.*access`).MatchString(page) || !strings.Contains(page, ext.Name) {
			t.Errorf("%s: the page reads %q: want that access to %s ended", how, page, ext.Name)
		}
		if !strings.Contains(page, team.Name) && !strings.Contains(page, d.Admins[0].Email) {
			t.Errorf("%s: the page reads %q: it does not say whom to ask (%s, %s)", how, page, team.Name, d.Admins[0].Email)
		}
		if forms := evalJS[[]string](t, ctx, `[...document.querySelectorAll("input[type=password], #email, #password, #sign-in, form")].filter(e => e.checkVisibility()).map(e => e.outerHTML.slice(0, 80))`); len(forms) > 0 {
			t.Errorf("%s: the access-ended page shows a sign-in form: %v", how, forms)
		}
	}
	// Lin's own browser, with the session of before: the old link.
	do(t, testerTab, chromedp.Navigate(link))
	check(testerTab, "the old link in Lin's browser")
	checkAccessible(t, testerTab, "access ended")
	// Any page with the old session.
	do(t, testerTab, chromedp.Navigate(m.URL()+"/builds"))
	check(testerTab, "the builds page in Lin's browser")
	// A fresh browser: the link alone.
	fresh := bbkPrivateTab(t)
	do(t, fresh, chromedp.Navigate(link))
	check(fresh, "the old link in a fresh browser")
}
