package browser_test

// Black-box tests of issue 29 (invite links expire and work once) as
// admins and testers meet it in the browser. They act only through the
// DevTools input domain (mouse clicks at an element's centre, typed keys)
// and navigation; JavaScript only reads the page (and leaves a marker on
// window to tell one document from the next).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/storetest"
)

// bbiLab is a new extension of the demo's first team, with no testers yet,
// and the admin's tab on its testers page.
func bbiLab(t *testing.T, m *cli.Main, d *demo.Result) (*betaport.Extension, context.Context) {
	t.Helper()
	team, err := m.Store.FindTeam(context.Background(), d.Extensions[0].TeamID)
	if err != nil {
		t.Fatal(err)
	}
	ext := storetest.MustExtension(t, m.Store, team, "Invite Lab")
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#invite-email`)))
	return ext, ctx
}

// bbiRowOf is a JavaScript expression: the testers row that names email.
func bbiRowOf(email string) string {
	return fmt.Sprintf(`[...document.querySelectorAll("#testers .row[data-tester]")].find(r => r.innerText.includes(%q))`, email)
}

// bbiAge is the row's invite-age cell, as shown.
func bbiAge(t *testing.T, ctx context.Context, email string) string {
	t.Helper()
	return evalJS[string](t, ctx, `(`+bbiRowOf(email)+`)?.querySelector(".invite-age")?.innerText ?? ""`)
}

// bbiListed is the tester as the admin API lists them.
type bbiListed struct {
	ID              int64      `json:"id"`
	Email           string     `json:"email"`
	Status          string     `json:"status"`
	InviteExpiresAt *time.Time `json:"inviteExpiresAt"`
	InviteUsedAt    *time.Time `json:"inviteUsedAt"`
}

func bbiAPITester(t *testing.T, m *cli.Main, d *demo.Result, extID int64, email string) bbiListed {
	t.Helper()
	c := signInHTTP(t, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s%s?limit=100", m.URL(), api.TestersPath(extID)), nil)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Data []bbiListed `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != 200 {
		t.Fatalf("testers list: %d %v", resp.StatusCode, err)
	}
	for _, x := range page.Data {
		if x.Email == email {
			return x
		}
	}
	t.Fatalf("%s is not in the testers list", email)
	return bbiListed{}
}

// bbiDates are the ways a page may write the day of at (in the page's
// time zone).
func bbiDates(t *testing.T, ctx context.Context, at time.Time) []string {
	t.Helper()
	zone := evalJS[string](t, ctx, `Intl.DateTimeFormat().resolvedOptions().timeZone`)
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	at = at.In(loc)
	return []string{at.Format("2 Jan 2006"), at.Format("2 January 2006"), at.Format("Jan 2, 2006"), at.Format("January 2, 2006"), at.Format("2006-01-02")}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// bbiOpenIn navigates a browser to link and waits until a new document of
// the app has booted somewhere other than the link.
func bbiOpenIn(t *testing.T, ctx context.Context, link string) string {
	t.Helper()
	// A marker on the document before, which the next one does not have.
	_, _ = chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`window.__bbiBefore = true`))
	do(t, ctx, chromedp.Navigate(link))
	bbkWait(t, ctx, `!window.__bbiBefore && !location.pathname.startsWith("/t/") && !!document.querySelector('.shell[data-app="client"] main h1')`,
		"the link led to no page")
	return evalJS[string](t, ctx, `location.pathname + location.search`)
}

// bbiWantNotice waits for the sign-in page's notice and wants it to say
// why (match) and to ask for a new link; the sign-in form is there, and
// no session: /api/session answers 401.
func bbiWantNotice(t *testing.T, ctx context.Context, what string, why *regexp.Regexp) {
	t.Helper()
	bbkWait(t, ctx, `(() => { const n = document.querySelector("#login-notice"); return !!n && n.checkVisibility() && n.innerText.trim().length > 20; })()`,
		what+": the sign-in page never showed the notice")
	notice := evalJS[string](t, ctx, `document.querySelector("#login-notice").innerText`)
	if !why.MatchString(notice) || !regexp.MustCompile(`(?i)ask`).MatchString(notice) || !regexp.MustCompile(`(?i)new (link|one)`).MatchString(notice) {
		t.Errorf("%s: the notice reads %q: want why (%s) and to ask the admin for a new link", what, notice, why)
	}
	if !evalJS[bool](t, ctx, `!!document.querySelector("#email")?.checkVisibility()`) {
		t.Errorf("%s: the sign-in page shows no sign-in form", what)
	}
	if st := evalJS[int](t, ctx, `fetch("/api/session").then(r => r.status)`); st != http.StatusUnauthorized {
		t.Errorf("%s: the browser is signed in (GET /api/session = %d)", what, st)
	}
}

// bbiWantBuilds wants the browser on its builds page, signed in as the
// tester.
func bbiWantBuilds(t *testing.T, ctx context.Context, what, where, email string) {
	t.Helper()
	if where != "/builds" {
		t.Fatalf("%s led to %s, want /builds", what, where)
	}
	if evalJS[bool](t, ctx, `!!document.querySelector("#login-form")?.checkVisibility()`) {
		t.Fatalf("%s: the builds page shows the sign-in form", what)
	}
	who := evalJS[string](t, ctx, `fetch("/api/session").then(r => r.ok ? r.json().then(s => s.kind + " " + (s.tester?.email ?? "")) : String(r.status))`)
	if who != "tester "+email {
		t.Fatalf("%s: the browser is signed in as %q, want tester %s", what, who, email)
	}
}

// TestBlackBoxInviteSevenDaysOneBrowser: the admin invites a tester with
// the keyboard, choosing "7 days" in "Link works for"; the note says the
// link works once, in one browser, until the day a week on, and the row
// says it expires in 7 days. The link signs a second browser in; a third
// browser lands on the sign-in page whose notice says the link was used
// and to ask for a new one; the second browser opening it again is on its
// builds; the admin's row then says nothing about expiry.
func TestBlackBoxInviteSevenDaysOneBrowser(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext, ctx := bbiLab(t, m, d)
	const email = "grace@example.com"

	bbkType(t, ctx, `#invite-email`, email)
	bbkType(t, ctx, `#invite-name`, "Grace Hopper")
	// Tab to "Link works for", and the arrow keys down to 7 days.
	bbkPress(t, ctx, kb.Tab)
	bbkWait(t, ctx, `document.activeElement?.id === "invite-days"`, "Tab from the name did not reach the link's time")
	if label := evalJS[string](t, ctx, `document.querySelector('label[for="invite-days"]')?.innerText ?? ""`); !strings.Contains(strings.ToLower(label), "link works for") {
		t.Errorf("the select is labelled %q, want \"Link works for\"", label)
	}
	for range 4 {
		if evalJS[string](t, ctx, `document.querySelector("#invite-days").selectedOptions[0].innerText`) == "7 days" {
			break
		}
		bbkPress(t, ctx, kb.ArrowDown)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("#invite-days").selectedOptions[0].innerText`); got != "7 days" {
		t.Fatalf("the arrow keys chose %q, want 7 days", got)
	}
	before := time.Now()
	bbkClickFound(t, ctx, "the Invite button", `document.querySelector("#invite")`)
	link := bbkShownLink(t, ctx, "")
	after := time.Now()

	// The note, read after the invite: once, one browser, until a week on.
	bbkWait(t, ctx, fmt.Sprintf(`(document.querySelector("#invite-note")?.innerText ?? "").includes(%q)`, email), "the note never named the invited tester")
	note := evalJS[string](t, ctx, `document.querySelector("#invite-note").innerText`)
	listed := bbiAPITester(t, m, d, ext.ID, email)
	if listed.InviteExpiresAt == nil || listed.InviteExpiresAt.Before(before.Add(7*24*time.Hour-time.Second)) || listed.InviteExpiresAt.After(after.Add(7*24*time.Hour+time.Second)) {
		t.Errorf("the service says the link expires at %v, want 7 days after the invite (%v)", listed.InviteExpiresAt, before.Add(7*24*time.Hour))
	}
	if !regexp.MustCompile(`(?i)\bonce\b`).MatchString(note) || !regexp.MustCompile(`(?i)one browser`).MatchString(note) {
		t.Errorf("the note reads %q: want that the link works once, in one browser", note)
	}
	if want := bbiDates(t, ctx, before.Add(7*24*time.Hour)); !containsAny(note, want) {
		t.Errorf("the note reads %q: want the day the link expires, a week on (%s)", note, want[0])
	}
	bbkWait(t, ctx, `!!(`+bbiRowOf(email)+`)`, "the invited tester never showed in the list")
	bbkWait(t, ctx, `/link expires in 7 days/.test((`+bbiRowOf(email)+`)?.querySelector(".invite-age")?.innerText ?? "")`,
		"the row never said the link expires in 7 days")
	if age := bbiAge(t, ctx, email); !strings.Contains(age, "today") {
		t.Errorf("the new row's invite cell reads %q: want when it was invited (today)", age)
	}

	// The second browser: signed in, on its builds.
	second := bbkPrivateTab(t)
	bbiWantBuilds(t, second, "the link in a second browser", bbiOpenIn(t, second, link), email)

	// The third browser: the sign-in page, saying the link was used.
	third := bbkPrivateTab(t)
	if where := bbiOpenIn(t, third, link); where != "/login?link=used" {
		t.Fatalf("the link in a third browser led to %s, want /login?link=used", where)
	}
	bbiWantNotice(t, third, "the used link in a third browser", regexp.MustCompile(`(?i)used|another browser`))

	// The second browser again: its builds.
	bbiWantBuilds(t, second, "the link opened again in the browser it signed in", bbiOpenIn(t, second, link), email)

	// The admin's row: active, and nothing about the link's expiry.
	bbkClickFound(t, ctx, "the Refresh button", `document.querySelector("#refresh-testers")`)
	bbkWait(t, ctx, `/active/i.test((`+bbiRowOf(email)+`)?.innerText ?? "")`, "the row never said the tester is active")
	bbkWait(t, ctx, `!/expire/i.test((`+bbiRowOf(email)+`)?.querySelector(".invite-age")?.innerText ?? "")`,
		"the row of a tester whose link was used still talks of the link's expiry")
	if l := bbiAPITester(t, m, d, ext.ID, email); l.Status != betaport.TesterActive || l.InviteUsedAt == nil {
		t.Errorf("after the link was used the service lists the tester %s, used at %v", l.Status, l.InviteUsedAt)
	}
}

// TestBlackBoxInviteExpiredLinkAndNewLink: a tester whose link expired 3
// days ago shows so in their row; the link leads a browser to the sign-in
// page saying it expired; the admin clicks New link in the row, the page
// shows the new link and the row says it expires in 14 days (the
// default); the old link now says it is no longer valid, and the new one
// signs in.
func TestBlackBoxInviteExpiredLinkAndNewLink(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	team, err := m.Store.FindTeam(context.Background(), d.Extensions[0].TeamID)
	if err != nil {
		t.Fatal(err)
	}
	ext := storetest.MustExtension(t, m.Store, team, "Invite Lab")
	const email = "late@example.com"
	token := credential.NewToken()
	late := &betaport.Tester{ExtensionID: ext.ID, Email: email, Name: "Late Larry"}
	link := betaport.InviteLink{Hash: credential.HashToken(token), ExpiresAt: time.Now().Add(-3*24*time.Hour - time.Hour)}
	if err := m.Store.InviteTester(context.Background(), late, link, d.Admins[0].Email); err != nil {
		t.Fatal(err)
	}
	oldLink := m.URL() + api.InvitePrefix + token

	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	bbkWait(t, ctx, `/link expired 3 days ago/.test((`+bbiRowOf(email)+`)?.querySelector(".invite-age")?.innerText ?? "")`,
		"the row of a link that expired 3 days ago never said so")

	expired := bbkPrivateTab(t)
	if where := bbiOpenIn(t, expired, oldLink); where != "/login?link=expired" {
		t.Fatalf("the expired link led to %s, want /login?link=expired", where)
	}
	bbiWantNotice(t, expired, "the expired link", regexp.MustCompile(`(?i)expired`))

	// New link, clicked with the mouse in the row.
	bbkClickFound(t, ctx, "the row's New link button", `(`+bbiRowOf(email)+`)?.querySelector("button.resend")`)
	fresh := bbkShownLink(t, ctx, "")
	if fresh == oldLink {
		t.Fatal("New link showed the old link")
	}
	bbkWait(t, ctx, `/link expires in 14 days/.test((`+bbiRowOf(email)+`)?.querySelector(".invite-age")?.innerText ?? "")`,
		"after New link the row never said the link expires in 14 days")
	if note := evalJS[string](t, ctx, `document.querySelector("#invite-note")?.innerText ?? ""`); !strings.Contains(note, email) {
		t.Errorf("the new link is shown with %q: it does not say whose it is", note)
	}

	replaced := bbkPrivateTab(t)
	if where := bbiOpenIn(t, replaced, oldLink); where != "/login?link=invalid" {
		t.Fatalf("the replaced link led to %s, want /login?link=invalid", where)
	}
	bbiWantNotice(t, replaced, "the replaced link", regexp.MustCompile(`(?i)no longer|not valid|invalid|replaced|newer`))

	tester := bbkPrivateTab(t)
	bbiWantBuilds(t, tester, "the new link", bbiOpenIn(t, tester, fresh), email)
}

// TestBlackBoxInviteOperatorDefaultInPage: on a service started with
// --invite-days 3, an invite that keeps "The default time" makes a link
// that works 3 days, and the note and the row say so.
func TestBlackBoxInviteOperatorDefaultInPage(t *testing.T) {
	t.Parallel()
	m, d := serve(t, 0, func(m *cli.Main) { m.Config.InviteDays = 3 })
	ext, ctx := bbiLab(t, m, d)
	const email = "soon@example.com"
	bbkType(t, ctx, `#invite-email`, email)
	before := time.Now()
	bbkPress(t, ctx, kb.Enter)
	bbkShownLink(t, ctx, "")
	bbkWait(t, ctx, fmt.Sprintf(`(document.querySelector("#invite-note")?.innerText ?? "").includes(%q)`, email), "the note never named the invited tester")
	note := evalJS[string](t, ctx, `document.querySelector("#invite-note").innerText`)
	if want := bbiDates(t, ctx, before.Add(3*24*time.Hour)); !containsAny(note, want) {
		t.Errorf("the note reads %q: want the day the link expires, 3 days on (%s)", note, want[0])
	}
	bbkWait(t, ctx, `/link expires in 3 days/.test((`+bbiRowOf(email)+`)?.querySelector(".invite-age")?.innerText ?? "")`,
		"the row never said the link expires in 3 days")
	if l := bbiAPITester(t, m, d, ext.ID, email); l.InviteExpiresAt == nil || l.InviteExpiresAt.Sub(before) < 3*24*time.Hour-time.Second || l.InviteExpiresAt.Sub(before) > 3*24*time.Hour+time.Minute {
		t.Errorf("the service says the link expires at %v, want 3 days after %v", l.InviteExpiresAt, before)
	}
}
