package http_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/storetest"
)

// hostile is text that would become markup if it reached a page unescaped:
// out of a double-quoted attribute (go-app's \" is not an HTML escape), a
// single-quoted one, text, and a script.
const hostile = `Tab"><meta http-equiv="refresh" content="0;url=https://evil.example/"><x-injected a="1` +
	`' onfocus='alert(1)' \"><x-injected2></script><script>alert(1)</script>`

// TestPagesEscapeHostileText renders every page, as each kind of visitor,
// with a hostile extension name, team name, bundle name, tester name and
// e-mail and a hostile query, parses the HTML as a browser would and
// checks that no element or attribute came from the data, in the head,
// the body or the embedded JSON.
func TestPagesEscapeHostileText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	team.Name = hostile
	ext := storetest.MustExtension(t, e.DB, team, hostile)
	p := &pipeline{e: e, ext: ext, key: e.key(t, ext)}
	p.submitAny(t, makeZip(t, map[string]string{
		"manifest.json": fmt.Sprintf(`{"manifest_version": 3, "name": %q, "version": "1.2.3"}`, hostile),
	}))
	admin := e.adminOf(t, team)
	// A tester whose name carries the text (addresses are validated, so
	// one with quotes cannot exist).
	token := credential.NewToken()
	tester := &betaport.Tester{ExtensionID: ext.ID, Email: uniqueEmail("o'brien+x"), Name: hostile, Status: betaport.TesterActive}
	if err := e.DB.InviteTester(ctx, tester, storetest.Link(credential.HashToken(token)), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	testerCookie := e.cookie(t, betaport.Session{TesterID: tester.ID})

	q := "?q=" + url.QueryEscape(hostile) + "&link=" + url.QueryEscape(hostile)
	paths := []string{"/", "/login", "/builds",
		fmt.Sprintf("/extensions/%d", ext.ID), fmt.Sprintf("/extensions/%d/testers", ext.ID),
		fmt.Sprintf("/extensions/%d/pages", ext.ID), fmt.Sprintf("/extensions/%d/settings", ext.ID)}
	visitors := map[string]http.Header{"admin": admin, "tester": testerCookie, "nobody": nil}
	for who, header := range visitors {
		for _, path := range paths {
			for _, query := range []string{"", q} {
				resp, body := e.do(t, "GET", path+query, header)
				if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
					continue // a problem, not a page
				}
				wantNoInjection(t, who+" "+path+query, body)
			}
		}
	}
}

// wantNoInjection parses page and fails on any element or attribute that
// only the hostile text could have made.
func wantNoInjection(t *testing.T, name string, page []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if strings.HasPrefix(n.Data, "x-injected") {
				t.Errorf("%s: injected element <%s>", name, n.Data)
			}
			for _, a := range n.Attr {
				switch {
				case a.Key == "http-equiv":
					t.Errorf("%s: injected <%s http-equiv=%q>", name, n.Data, a.Val)
				case strings.HasPrefix(a.Key, "on"):
					t.Errorf("%s: injected handler %s on <%s>", name, a.Key, n.Data)
				case a.Key == "a" || strings.ContainsAny(a.Key, `"'\`):
					t.Errorf("%s: injected attribute %q on <%s>", name, a.Key, n.Data)
				}
			}
			if n.Data == "script" && n.FirstChild != nil && strings.Contains(n.FirstChild.Data, "alert(1)") &&
				!hasAttr(n, "type", "application/json") {
				t.Errorf("%s: injected script %q", name, n.FirstChild.Data)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

func hasAttr(n *html.Node, key, val string) bool {
	for _, a := range n.Attr {
		if a.Key == key && a.Val == val {
			return true
		}
	}
	return false
}

// TestAttributesKeepTheirText: escaping is exact, so a name with quotes
// and backslashes reads the same in an attribute as it was written.
func TestAttributesKeepTheirText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	name := `Quote " and \ backslash & <angle>`
	ext := storetest.MustExtension(t, e.DB, team, name)
	resp, body := e.do(t, "GET", fmt.Sprintf("/extensions/%d", ext.ID), e.adminOf(t, team))
	if resp.StatusCode != 200 {
		t.Fatalf("page = %d", resp.StatusCode)
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var found, doubled bool
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "script" {
			return // JSON, where a backslash is written \\
		}
		for _, a := range n.Attr {
			found = found || strings.Contains(a.Val, name)
			doubled = doubled || strings.Contains(a.Val, `\\`)
		}
		if n.Type == html.TextNode {
			found = found || strings.Contains(n.Data, name)
			doubled = doubled || strings.Contains(n.Data, `\\`)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if !found {
		t.Errorf("the name %q is not on the page as written", name)
	}
	if doubled {
		t.Errorf("a backslash was doubled on the page")
	}
}

// TestTesterNeverSeesAdminControls: the server renders an admins' page for
// a tester as the app will — a page that says it is for admins, with no
// form or admin button — not the admin page the app replaces a moment
// later.
func TestTesterNeverSeesAdminControls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	tester, _ := e.testerOf(t, ext, betaport.TesterActive)
	visitors := map[string]http.Header{"tester": e.cookie(t, betaport.Session{TesterID: tester.ID}), "admin": e.adminOf(t, team)}
	for _, page := range []string{"", "/pages", "/testers", "/adoption", "/settings"} {
		for who, header := range visitors {
			resp, body := e.do(t, "GET", fmt.Sprintf("/extensions/%d%s", ext.ID, page), header)
			if resp.StatusCode != 200 {
				t.Fatalf("%s as %s = %d", page, who, resp.StatusCode)
			}
			adminsOnly := bytes.Contains(body, []byte(`id="admins-only"`))
			controls := bytes.Contains(body, []byte("<form")) || bytes.Contains(body, []byte(`id="rotate-token"`)) || bytes.Contains(body, []byte(`id="refresh-testers"`)) ||
				bytes.Contains(body, []byte(`id="upload-panel"`)) || bytes.Contains(body, []byte(`class="ext-nav"`))
			if who == "tester" && (!adminsOnly || controls) {
				t.Errorf("%s as a tester: admins-only page %v, admin controls %v", page, adminsOnly, controls)
			}
			if who == "admin" && adminsOnly {
				t.Errorf("%s as an admin: told the page is for admins", page)
			}
		}
	}
}

// TestPrerenderedPagesWriteNoFalseBooleans: before the app boots, the
// browser reads the server's HTML, where a boolean attribute is true when
// present, whatever its value. The testers page, prerendered, selects the
// "All" status (not the last option), and no boolean attribute is written
// false; enumerated ones that mean what they say (aria-busy="false") stay.
func TestPrerenderedPagesWriteNoFalseBooleans(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	resp, body := e.do(t, "GET", fmt.Sprintf("/extensions/%d/testers", ext.ID), e.adminOf(t, team))
	if resp.StatusCode != 200 {
		t.Fatalf("page = %d", resp.StatusCode)
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var selected, daysSelected []string
	var falseBooleans []string
	selectID := func(n *html.Node) string {
		for ; n != nil; n = n.Parent {
			if n.Type == html.ElementNode && n.Data == "select" {
				for _, a := range n.Attr {
					if a.Key == "id" {
						return a.Val
					}
				}
			}
		}
		return ""
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				switch a.Key {
				case "hidden", "disabled", "selected", "checked", "required", "readonly":
					if a.Val == "false" {
						falseBooleans = append(falseBooleans, "<"+n.Data+" "+a.Key+`="false">`)
					}
				}
				if n.Data == "option" && a.Key == "selected" {
					for _, b := range n.Attr {
						if b.Key != "value" {
							continue
						}
						switch selectID(n) {
						case "tester-status":
							selected = append(selected, b.Val)
						case "invite-days":
							daysSelected = append(daysSelected, b.Val)
						}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(falseBooleans) > 0 {
		t.Errorf("the page writes boolean attributes false, which a browser reads as true: %v", falseBooleans)
	}
	if len(selected) != 1 || selected[0] != "" {
		t.Errorf("the status filter's selected options are %q, want just All (\"\")", selected)
	}
	if len(daysSelected) != 1 || daysSelected[0] != "0" {
		t.Errorf("the invite form's expiry choices selected are %q, want just the default (\"0\")", daysSelected)
	}

	out, err := bphttp.EscapeAttributes([]byte(`<button hidden="false" disabled aria-busy="false" draggable="false">x</button>`))
	if err != nil {
		t.Fatal(err)
	}
	// Attributes come out sorted by name (go-app writes them in map order).
	if got, want := string(out), `<button aria-busy="false" disabled draggable="false">x</button>`; got != want {
		t.Errorf("EscapeAttributes wrote %s, want %s", got, want)
	}
}
