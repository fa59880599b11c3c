package browser_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/demo"
)

// Signed out, the app sends a person to the sign-in page; a wrong password
// is said plainly; signing in shows who is signed in; signing out ends it.
func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := newTab(t)
	admin := d.Admins[0]

	openApp(t, ctx, m.URL()+"/")
	waitLocation(t, ctx, m.URL()+"/login")

	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#email`), admin.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "not the password"),
		chromedp.Click(chromedp.CSS(`#sign-in`)),
		chromedp.WaitVisible(chromedp.CSS(`#login-error`)),
	); err != nil {
		t.Fatal(err)
	}
	msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#login-error`)))
	if !strings.Contains(msg, "e-mail address or the password is wrong") {
		t.Fatalf("wrong-password message = %q", msg)
	}

	signIn(t, ctx, m.URL(), admin.Email, admin.Password)
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#signed-in-as`)))
	if err != nil || !strings.Contains(who, admin.Email) || !strings.Contains(who, "Admin of "+admin.Team) {
		t.Fatalf("navigation shows %q (%v), want the admin's e-mail and team", who, err)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#sign-out`))); err != nil {
		t.Fatal(err)
	}
	waitLocation(t, ctx, m.URL()+"/login")
	// The session is gone on the server too: a fresh load is signed out.
	openApp(t, ctx, m.URL()+"/")
	waitLocation(t, ctx, m.URL()+"/login")
	if err := chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(`#signed-in-as`))); err != nil {
		t.Fatal(err)
	}
}

// A tester opening their personal link lands on their builds, signed in.
func TestTesterLinkOpensBuilds(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := newTab(t)
	openApp(t, ctx, m.URL()+d.TesterLink)
	waitLocation(t, ctx, m.URL()+"/builds")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#builds .build-name`))); err != nil {
		t.Fatal(err)
	}
	name, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#builds .build-name`)))
	who, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#signed-in-as`)))
	if name != d.Extensions[0].Name || !strings.Contains(who, "Tester") {
		t.Fatalf("builds page shows %q for %q, want %q for a tester", name, who, d.Extensions[0].Name)
	}
	checkAccessible(t, ctx, "a tester's builds")
	// The download link serves the current bundle to the signed-in tester.
	cur, err := m.Store.FindBundle(context.Background(), d.Extensions[0].ID, d.Extensions[0].CurrentBundle)
	if err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("#builds a.download").href).then(r => r.status + " " + r.headers.get("ETag"))`, chromedp.EvalAwaitPromise))
	if want := `200 "` + cur.SHA256 + `"`; err != nil || got != want {
		t.Fatalf("the download link answers %q (%v), want %q", got, err, want)
	}
}

// demoTesterTab opens the demo tester's link in a tab of their own, which
// shows their builds; revoke revokes them, as the demo's first admin.
func demoTesterTab(t *testing.T) (m *cli.Main, d *demo.Result, ctx context.Context, revoke func()) {
	t.Helper()
	m, d = startService(t)
	tester, err := m.Store.FindTesterByInvite(context.Background(), credential.HashToken(strings.TrimPrefix(d.TesterLink, "/t/")))
	if err != nil {
		t.Fatal(err)
	}
	ctx = newTab(t)
	openApp(t, ctx, m.URL()+d.TesterLink)
	waitLocation(t, ctx, m.URL()+"/builds")
	return m, d, ctx, func() {
		t.Helper()
		if err := m.Store.RevokeTester(context.Background(), tester.ID, d.Admins[0].Email); err != nil {
			t.Fatal(err)
		}
	}
}

// A tester revoked while their builds page is open presses Install
// (.crx), with the mouse: the page says their access ended, as a reload
// does (issue 28: the press did nothing and said nothing). The page may
// learn it first by itself (the server ends its event stream with the
// access): then the hand finds the ended page, which is as good.
func TestRevokedTesterPressingInstallIsToldAccessEnded(t *testing.T) {
	t.Parallel()
	m, d, ctx, revoke := demoTesterTab(t)
	x, y := bbkFind(t, ctx, "Install (.crx)", `document.querySelector("#builds a.install")`)
	revoke()
	if evalJS[bool](t, ctx, `!!document.querySelector("#builds a.install")?.checkVisibility()`) {
		do(t, ctx, chromedp.MouseClickXY(x, y))
	}
	waitLocation(t, ctx, m.URL()+"/ended")
	waitJS(t, ctx, `document.querySelector("#ended-detail")?.textContent.includes(`+strconv.Quote(d.Admins[0].Email)+`)`)
	if got := text(t, ctx, `main`); !strings.Contains(got, "no newer build reaches them") {
		t.Errorf("after Install the page says %q; want their access ended and what happens to their installed builds", got)
	}
}

// A revoked tester is told their access ended and whom to ask, on the
// next page they open and from their old link, never with the admins'
// sign-in.
func TestRevokedTesterSeesAccessEnded(t *testing.T) {
	t.Parallel()
	m, d, ctx, revoke := demoTesterTab(t)
	revoke()
	for _, open := range []string{m.URL() + "/builds", m.URL() + d.TesterLink} {
		openApp(t, ctx, open)
		waitLocation(t, ctx, m.URL()+"/ended")
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#access-ended`))); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, `document.querySelector("#ended-detail").textContent !== ""`)
		detail := text(t, ctx, `#ended-detail`)
		if !strings.Contains(detail, d.Admins[0].Email) || !strings.Contains(detail, d.Admins[0].Team) {
			t.Fatalf("after opening %s the page says %q: want whom to ask", open, detail)
		}
		if evalJS[bool](t, ctx, `document.querySelector("#login-form") !== null || document.querySelector("#signed-in-as") !== null`) {
			t.Fatal("a revoked tester is shown the sign-in form or as signed in")
		}
	}
	checkAccessible(t, ctx, "a revoked tester's page")
}
