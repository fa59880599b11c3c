package browser_test

// Black-box tests of issue 31 ("Releases testers can trust: channels,
// staged rollouts, halt and promote") as an admin meets it in the browser,
// written from the issue, the pages' description and the API's contract
// without reading the app's code. They act only through the DevTools input
// domain (mouse clicks at an element's centre, typed keys, the wheel,
// dropped files) and the browser's own navigation (Back, Forward, reload);
// JavaScript only reads the page. Plain HTTP stands in for pipelines and
// for another admin, and checks what the page claims against the service.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// ---------------------------------------------------------------- helpers

// bbcChannel and bbcRollout are a channel and its rollout as the API
// answers them.
type bbcChannel struct {
	Name          string      `json:"name"`
	CurrentBundle int64       `json:"currentBundle"`
	Rollout       *bbcRollout `json:"rollout"`
	Testers       int         `json:"testers"`
}

type bbcRollout struct {
	ID        int64  `json:"id"`
	Channel   string `json:"channel"`
	Bundle    int64  `json:"bundle"`
	Previous  int64  `json:"previous"`
	Percent   int    `json:"percent"`
	State     string `json:"state"`
	Reached   int    `json:"reached"`
	Installed int    `json:"installed"`
}

// bbcBundle is a bundle as the API answers it.
type bbcBundle struct {
	Number   int64    `json:"number"`
	Version  string   `json:"version"`
	Current  bool     `json:"current"`
	Channels []string `json:"channels"`
}

// bbcTester is a tester as the API answers it.
type bbcTester struct {
	ID      int64  `json:"id"`
	Email   string `json:"email"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Channel string `json:"channel"`
}

func bbcChannels(a *bb20API, extID int64) []bbcChannel {
	a.t.Helper()
	var out struct {
		Items []bbcChannel `json:"items"`
	}
	a.get(fmt.Sprintf("/api/extensions/%d/channels", extID), &out)
	return out.Items
}

func bbcChannelNames(a *bb20API, extID int64) []string {
	var names []string
	for _, c := range bbcChannels(a, extID) {
		names = append(names, c.Name)
	}
	return names
}

func bbcGetChannel(a *bb20API, extID int64, name string) bbcChannel {
	a.t.Helper()
	var c bbcChannel
	a.get(fmt.Sprintf("/api/extensions/%d/channels/%s", extID, name), &c)
	return c
}

func bbcCreateChannel(a *bb20API, extID int64, name string) {
	a.t.Helper()
	code, body := a.call(http.MethodPost, fmt.Sprintf("/api/extensions/%d/channels", extID), map[string]string{"name": name})
	if code != http.StatusCreated {
		a.t.Fatalf("creating channel %s through the API: %d %s", name, code, body)
	}
}

func bbcBundles(a *bb20API, extID int64) []bbcBundle {
	a.t.Helper()
	var bs []bbcBundle
	a.get(fmt.Sprintf("/api/extensions/%d/bundles?page=0", extID), &bs)
	return bs
}

func bbcBundleOf(a *bb20API, extID, number int64) bbcBundle {
	a.t.Helper()
	for _, b := range bbcBundles(a, extID) {
		if b.Number == number {
			return b
		}
	}
	a.t.Fatalf("the API lists no bundle #%d", number)
	return bbcBundle{}
}

func bbcTesters(a *bb20API, extID int64, channel string) []bbcTester {
	a.t.Helper()
	path := fmt.Sprintf("/api/extensions/%d/testers?limit=100", extID)
	if channel != "" {
		path += "&channel=" + channel
	}
	var page struct {
		Data []bbcTester `json:"data"`
	}
	a.get(path, &page)
	return page.Data
}

func bbcSetTesterChannel(a *bb20API, extID, testerID int64, channel string) {
	a.t.Helper()
	code, body := a.call(http.MethodPut, fmt.Sprintf("/api/extensions/%d/testers/%d/channel", extID, testerID), map[string]string{"channel": channel})
	if code != http.StatusOK {
		a.t.Fatalf("moving tester %d to %s through the API: %d %s", testerID, channel, code, body)
	}
}

// bbcSubmit publishes version as a pipeline does (the submit flow's three
// calls with key), to channel ("" the default) at rollout percent (0: all).
func bbcSubmit(t *testing.T, base string, extID int64, key, version, channel string, rollout int) bbcBundle {
	t.Helper()
	zip := extensionZip(t, map[string]string{
		"manifest.json": fmt.Sprintf(`{"manifest_version": 3, "name": "Channel Lab", "version": %q}`, version),
		"background.js": "console.log(" + strconv.Quote(version) + ")\n",
	})
	fields := map[string]any{}
	if channel != "" {
		fields["channel"] = channel
	}
	if rollout > 0 {
		fields["rollout"] = rollout
	}
	b := submitFields(t, base, api.ServiceKey{ExtensionID: strconv.FormatInt(extID, 10), APIKey: key}, zip, fields)
	return bbcBundle{Number: b.Number, Version: b.Version, Current: b.Current, Channels: b.Channels}
}

// bbcBlock is the selector of a channel's block on the Channels page.
func bbcBlock(name string) string {
	return fmt.Sprintf(`#channels section.channel[data-channel=%q]`, name)
}

// bbcShown is a JavaScript expression: the text of sel when it is shown,
// else "".
func bbcShown(sel string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e && e.checkVisibility() ? e.innerText.trim() : ""; })()`, sel)
}

func bbcRead(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return evalJS[string](t, ctx, bbcShown(sel))
}

// bbcFind is a JavaScript expression finding sel, for bbkClickFound.
func bbcFind(sel string) string { return fmt.Sprintf(`document.querySelector(%q)`, sel) }

func bbcClick(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	bbkClickFound(t, ctx, sel, bbcFind(sel))
}

// bbcRetype clicks into a field, selects what it holds with the keyboard
// and types text over it.
func bbcRetype(t *testing.T, ctx context.Context, sel, text string) {
	t.Helper()
	bbkClickIntoField(t, ctx, sel)
	do(t, ctx, chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if text == "" {
		bbkPress(t, ctx, kb.Backspace)
	} else {
		do(t, ctx, chromedp.KeyEvent(text))
	}
	bbkWait(t, ctx, fmt.Sprintf(`document.querySelector(%q)?.value === %q`, sel, text), fmt.Sprintf("%s never held %q after typing it", sel, text))
}

// bbcTabInto clicks into the field from and presses Tab until the element
// with id has the focus, as a person reaches a select from the field
// before it.
func bbcTabInto(t *testing.T, ctx context.Context, from, id string) {
	t.Helper()
	bbkClickIntoField(t, ctx, from)
	for range 8 {
		bbkPress(t, ctx, kb.Tab)
		if evalJS[string](t, ctx, `document.activeElement?.id ?? ""`) == id {
			return
		}
	}
	t.Fatalf("eight Tabs from %s never reached #%s (the focus is on %s)", from, id,
		evalJS[string](t, ctx, `document.activeElement?.outerHTML.slice(0, 160) ?? "nothing"`))
}

// bbcChooseByKeys changes the focused select sel to the option of value
// want with ArrowDown and ArrowUp, one press at a time, each seen taken.
func bbcChooseByKeys(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	if got := evalJS[string](t, ctx, `"#" + (document.activeElement?.id ?? "")`); got != sel {
		t.Fatalf("choosing %q in %s by keys: the focus is on %s", want, sel, got)
	}
	values := evalJS[[]string](t, ctx, fmt.Sprintf(`[...document.querySelector(%q).options].map(o => o.value)`, sel))
	wantIdx := slices.Index(values, want)
	if wantIdx < 0 {
		t.Fatalf("%s offers %q: no %q", sel, values, want)
	}
	for range len(values) + 2 {
		cur := evalJS[int](t, ctx, fmt.Sprintf(`document.querySelector(%q).selectedIndex`, sel))
		if cur == wantIdx {
			return
		}
		key := kb.ArrowDown
		if cur > wantIdx {
			key = kb.ArrowUp
		}
		bbkPress(t, ctx, key)
		bbkWait(t, ctx, fmt.Sprintf(`document.querySelector(%q).selectedIndex !== %d`, sel, cur),
			fmt.Sprintf("an arrow key on %s did not change its choice", sel))
	}
	t.Fatalf("the arrow keys never chose %q in %s (it holds %q)", want, sel,
		evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).value`, sel)))
}

// bbcNet records the method and URL of every request the tab sends.
type bbcNet struct {
	mu   sync.Mutex
	reqs []string
}

func bbcRecord(t *testing.T, ctx context.Context) *bbcNet {
	t.Helper()
	n := &bbcNet{}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			n.mu.Lock()
			n.reqs = append(n.reqs, e.Request.Method+" "+e.Request.URL)
			n.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *bbcNet) mark() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.reqs)
}

// since lists the requests sent since mark whose line contains part.
func (n *bbcNet) since(mark int, part string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, r := range n.reqs[mark:] {
		if strings.Contains(r, part) {
			out = append(out, r)
		}
	}
	return out
}

// bbcRolloutText reads a rollout's "P % · R of T testers" from text.
var bbcRolloutText = regexp.MustCompile(`(\d+)\s*%\s*·\s*(\d+)\s+of\s+(\d+)\s+testers?`)

// bbcWantRolloutShown checks that text shows the rollout c has: its
// percentage, the testers it reaches and the testers on the channel.
func bbcWantRolloutShown(t *testing.T, where, text string, c bbcChannel) {
	t.Helper()
	m := bbcRolloutText.FindStringSubmatch(text)
	if m == nil {
		t.Errorf("%s reads %q: no \"P %% · R of T testers\"", where, text)
		return
	}
	if want := fmt.Sprintf("%d|%d|%d", c.Rollout.Percent, c.Rollout.Reached, c.Testers); m[1]+"|"+m[2]+"|"+m[3] != want {
		t.Errorf("%s reads %q: the API says %d %% · %d of %d testers reached (the issue's \"25 %% · 12 of 48 testers on it\" is the reach; %d have installed it)",
			where, text, c.Rollout.Percent, c.Rollout.Reached, c.Testers, c.Rollout.Installed)
	}
}

// bbcMark marks the page's document, to prove later that it was not
// reloaded.
func bbcMark(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.__bbcSameDocument = true`))
}

func bbcSameDocument(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	if !evalJS[bool](t, ctx, `window.__bbcSameDocument === true`) {
		t.Errorf("%s: the page was reloaded", what)
	}
}

func bbcChannelsURL(base string, extID int64) string {
	return fmt.Sprintf("%s/extensions/%d/channels", base, extID)
}

// bbcOpenChannels opens the Channels page and waits for the beta block.
func bbcOpenChannels(t *testing.T, ctx context.Context, base string, extID int64) {
	t.Helper()
	openApp(t, ctx, bbcChannelsURL(base, extID))
	bbkWait(t, ctx, `!!document.querySelector(`+strconv.Quote(bbcBlock("beta"))+`)`, "the Channels page never showed the beta channel")
}

// ---------------------------------------------------------------- tests

// TestBlackBoxChannelsCreateAfterATypoAndPromoteToIt: the admin reaches the
// Channels page by its link in the extension's nav (between Testers and
// Adoption); a channel name with capitals and a space is refused with a
// message and makes nothing; fixed and sent with Enter it makes the
// channel, whose block says it has no bundle and no testers; the same name
// again is refused; the current bundle promoted to it for everyone (the
// channel chosen with the arrow keys) becomes its current bundle, and the
// API agrees.
func TestBlackBoxChannelsCreateAfterATypoAndPromoteToIt(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1] // Reader Mode Plus: 3 bundles, 5 testers
	a := bb20AdminAPI(t, m, d)
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	bbkWait(t, ctx, `!!document.querySelector("#nav-channels")`, "the extension's nav has no Channels link")
	nav := evalJS[[]string](t, ctx, `[...document.querySelectorAll("nav.ext-nav a")].map(a => a.id || a.innerText.trim())`)
	if i := slices.Index(nav, "nav-channels"); i < 1 || !strings.Contains(strings.ToLower(nav[i-1]), "testers") || i+1 >= len(nav) || !strings.Contains(strings.ToLower(nav[i+1]), "adoption") {
		t.Errorf("the nav's links are %q: want Channels between Testers and Adoption", nav)
	}
	bbcClick(t, ctx, "#nav-channels")
	waitLocation(t, ctx, bbcChannelsURL(m.URL(), ext.ID))
	bbkWait(t, ctx, `!!document.querySelector(`+strconv.Quote(bbcBlock("beta"))+`)`, "the Channels page never showed the beta channel")
	bbcMark(t, ctx)
	if got := bbcRead(t, ctx, bbcBlock("beta")+" .channel-current"); got != "#3" {
		t.Errorf("beta's current bundle reads %q, want #3", got)
	}

	// A typo: capitals and a space.
	bbkType(t, ctx, "#channel-name", "Internal QA")
	bbcClick(t, ctx, "#create-channel")
	bbkWait(t, ctx, bbcShown("#channels-error")+` !== ""`, "a channel name with capitals and a space showed no message")
	msg := bbcRead(t, ctx, "#channels-error")
	t.Logf("the bad name is refused with: %q", msg)
	if regexp.MustCompile(`(?i)^betaport:|invalid:`).MatchString(msg) {
		code, body := a.call(http.MethodPost, fmt.Sprintf("/api/extensions/%d/channels", ext.ID), map[string]string{"name": "Internal QA"})
		t.Errorf("the message for a bad name reads %q: a program's error prefix shown to a person (the API answers %d %s)", msg, code, body)
	}
	if !strings.Contains(msg, "lower-case") && !strings.Contains(msg, "letters") {
		t.Errorf("the message for a bad name reads %q: want what a name may be", msg)
	}
	if names := bbcChannelNames(a, ext.ID); !slices.Equal(names, []string{"beta"}) {
		t.Errorf("after the refused name the API lists channels %q, want only beta", names)
	}
	if evalJS[int](t, ctx, `document.querySelectorAll("#channels section.channel").length`) != 1 {
		t.Errorf("after the refused name the page shows channels %q", evalJS[[]string](t, ctx, `[...document.querySelectorAll("#channels section.channel")].map(s => s.dataset.channel)`))
	}

	// Fixed, and sent with Enter.
	bbcRetype(t, ctx, "#channel-name", "internal")
	bbkPress(t, ctx, kb.Enter)
	bbkWait(t, ctx, `!!document.querySelector(`+strconv.Quote(bbcBlock("internal"))+`)`, "the fixed name made no channel block")
	bbkWait(t, ctx, bbcShown("#channels-error")+` === ""`, "the message about the typo stayed after the fixed name was accepted")
	bbkWait(t, ctx, `/internal/.test(`+bbcShown("#channels-status")+`)`, "the status never said the channel internal was made")
	if names := bbcChannelNames(a, ext.ID); !slices.Equal(names, []string{"beta", "internal"}) {
		t.Errorf("the API lists channels %q, want beta and internal", names)
	}
	if got := evalJS[[]string](t, ctx, `[...document.querySelectorAll("#channels section.channel")].map(s => s.dataset.channel)`); !slices.Equal(got, []string{"beta", "internal"}) {
		t.Errorf("the page shows channel blocks %q, want beta then internal", got)
	}
	block := bbcRead(t, ctx, bbcBlock("internal"))
	if cur := bbcRead(t, ctx, bbcBlock("internal")+" .channel-current"); !strings.Contains(cur, "no bundle") {
		t.Errorf("the new channel's current bundle reads %q, want \"no bundle yet\"", cur)
	}
	if !regexp.MustCompile(`\b0 testers`).MatchString(block) {
		t.Errorf("the new channel's block reads %q: want \"0 testers\"", block)
	}

	// The same name again.
	bbcRetype(t, ctx, "#channel-name", "internal")
	bbkPress(t, ctx, kb.Enter)
	bbkWait(t, ctx, bbcShown("#channels-error")+` !== ""`, "the same channel name again showed no message")
	t.Logf("the duplicate is refused with: %q", bbcRead(t, ctx, "#channels-error"))
	if names := bbcChannelNames(a, ext.ID); !slices.Equal(names, []string{"beta", "internal"}) {
		t.Errorf("after the duplicate the API lists channels %q", names)
	}

	// Promote the current bundle to it, for everyone.
	before := bbcRead(t, ctx, "#channels-status")
	bbcRetype(t, ctx, "#promote-bundle", "3")
	bbcTabInto(t, ctx, "#promote-bundle", "promote-channel")
	bbcChooseByKeys(t, ctx, "#promote-channel", "internal")
	bbcClick(t, ctx, "#promote")
	bbkWait(t, ctx, bbcShown(bbcBlock("internal")+" .channel-current")+` === "#3"`, "after the promote internal's block never said #3")
	bbkWait(t, ctx, fmt.Sprintf(`(() => { const s = %s; return s !== "" && s !== %q; })()`, bbcShown("#channels-status"), before), "the status never said what the promote did")
	t.Logf("after the promote the status says %q", bbcRead(t, ctx, "#channels-status"))
	if e := bbcRead(t, ctx, "#channels-error"); e != "" {
		t.Errorf("after a promote that worked the page shows the error %q", e)
	}
	if bbcRead(t, ctx, bbcBlock("internal")+" .channel-rollout") != "" {
		t.Errorf("a promote for everyone shows a rollout in progress: %q", bbcRead(t, ctx, bbcBlock("internal")))
	}
	if c := bbcGetChannel(a, ext.ID, "internal"); c.CurrentBundle != 3 || c.Rollout != nil {
		t.Errorf("the API says internal is %+v, want bundle #3 current and no rollout", c)
	}
	if c := bbcGetChannel(a, ext.ID, "beta"); c.CurrentBundle != 3 || c.Rollout != nil {
		t.Errorf("the promote changed beta: %+v", c)
	}
	if b := bbcBundleOf(a, ext.ID, 3); !slices.Contains(b.Channels, "internal") || !slices.Contains(b.Channels, "beta") {
		t.Errorf("the API says bundle #3 is on %q, want beta and internal", b.Channels)
	}
	bbcSameDocument(t, ctx, "the Channels page")
}

// TestBlackBoxChannelsRolloutHaltResumeComplete: on 40 testers of beta, a
// bundle published to internal is promoted to beta at
// 50 %: beta's block shows "Rolling out #2" with the API's percentage, the
// testers it reaches and beta's testers, the current bundle unchanged; a
// second tab open on the bundles list shows the row's channels change with
// no reload. Halt: the rollout says halted, Resume replaces Halt, and the
// note about copies keeping the build is beside the buttons. Resume, then
// 80 typed and Enter pressed twice (no error, one step), then 100 with the
// Advance button: the rollout is gone, #2 is current, and the second tab's
// row and badge follow.
func TestBlackBoxChannelsRolloutHaltResumeComplete(t *testing.T) {
	t.Parallel()
	m, d, ext := startWithTesters(t, 40) // Quiet Hours: no bundles yet
	a := bb20AdminAPI(t, m, d)
	key := setKey(t, m.Store, ext.ID)
	if b := bbcSubmit(t, m.URL(), ext.ID, key, "1.0.0", "", 0); b.Number != 1 {
		t.Fatalf("the first publish made bundle %+v", b)
	}
	bbcCreateChannel(a, ext.ID, "internal")
	if b := bbcSubmit(t, m.URL(), ext.ID, key, "1.1.0", "internal", 0); b.Number != 2 {
		t.Fatalf("the publish to internal made bundle %+v", b)
	}
	beta := bbcGetChannel(a, ext.ID, "beta")
	if beta.CurrentBundle != 1 || beta.Rollout != nil || beta.Testers != 40 {
		t.Fatalf("before the test the API says beta is %+v, want #1 current, no rollout, 40 testers", beta)
	}

	ctx := adminTab(t, m, d)
	bbcOpenChannels(t, ctx, m.URL(), ext.ID)
	bbcMark(t, ctx)
	// A second tab, on the bundles list.
	list := newTab(t)
	openApp(t, list, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	row2 := `#bundle-rows [data-bundle="2"] .bundle-channels`
	bbkWait(t, list, `/internal/.test(`+bbcShown(row2)+`)`, "the bundles list never said bundle #2 is on internal")
	if got := bbcRead(t, list, row2); strings.Contains(got, "beta") {
		t.Errorf("before the promote bundle #2's channels read %q", got)
	}
	bbcMark(t, list)

	betaBlock := bbcBlock("beta")
	bbkWait(t, ctx, bbcShown(betaBlock+" .channel-current")+` === "#1"`, "beta's block never said #1 is current")
	if got := bbcRead(t, ctx, betaBlock); !strings.Contains(got, "40 testers") {
		t.Errorf("beta's block reads %q: want its 40 testers", got)
	}

	// Promote #2 to beta at 50 %.
	bbcRetype(t, ctx, "#promote-bundle", "2")
	bbcTabInto(t, ctx, "#promote-bundle", "promote-channel")
	bbcChooseByKeys(t, ctx, "#promote-channel", "beta")
	bbcRetype(t, ctx, "#promote-percent", "50")
	bbcClick(t, ctx, "#promote")
	bbkWait(t, ctx, `/50\s*%/.test(`+bbcShown(betaBlock+" .channel-rollout .rollout-text")+`)`, "beta's block never showed the rollout at 50 %")
	beta = bbcGetChannel(a, ext.ID, "beta")
	if beta.Rollout == nil || beta.Rollout.Bundle != 2 || beta.Rollout.Percent != 50 || beta.Rollout.State != "active" || beta.CurrentBundle != 1 {
		t.Fatalf("after the promote at 50 %% the API says beta is %+v (rollout %+v)", beta, beta.Rollout)
	}
	t.Logf("the rollout at 50 %% reaches %d of %d testers (API)", beta.Rollout.Reached, beta.Testers)
	if beta.Rollout.Reached <= 0 || beta.Rollout.Reached >= beta.Testers {
		t.Errorf("a 50 %% rollout on 40 testers reaches %d of them", beta.Rollout.Reached)
	}
	rollout := bbcRead(t, ctx, betaBlock+" .channel-rollout")
	if !strings.Contains(rollout, "Rolling out #2") {
		t.Errorf("beta's rollout reads %q: want \"Rolling out #2\"", rollout)
	}
	bbcWantRolloutShown(t, "beta's rollout", bbcRead(t, ctx, betaBlock+" .rollout-text"), beta)
	if got := bbcRead(t, ctx, betaBlock+" .channel-current"); got != "#1" {
		t.Errorf("during the rollout beta's current bundle reads %q, want #1 (the rest keep it)", got)
	}
	// The second tab, with no reload.
	bbkWait(t, list, `/beta/.test(`+bbcShown(row2)+`) && /50\s*%/.test(`+bbcShown(row2)+`)`, "the open bundles list never showed bundle #2 rolling out on beta at 50 %")
	shown := bbcRead(t, list, row2)
	t.Logf("the second tab's row #2 reads %q", shown)
	if !strings.Contains(shown, "internal") {
		t.Errorf("bundle #2's channels read %q: internal is gone", shown)
	}
	bbcWantRolloutShown(t, "the bundles list's row #2", shown, beta)
	bbcSameDocument(t, list, "the second tab")

	// Halt.
	bbcClick(t, ctx, betaBlock+" .halt")
	bbkWait(t, ctx, `/halted/i.test(`+bbcShown(betaBlock+" .rollout-text")+`)`, "Halt never made the rollout say halted")
	bbkWait(t, ctx, bbcShown(betaBlock+" .resume")+` !== "" && `+bbcShown(betaBlock+" .halt")+` === ""`, "after Halt the Resume button never replaced Halt")
	if c := bbcGetChannel(a, ext.ID, "beta"); c.Rollout == nil || c.Rollout.State != "halted" || c.Rollout.Percent != 50 {
		t.Errorf("after Halt the API says beta's rollout is %+v", c.Rollout)
	}
	halted := bbcRead(t, ctx, betaBlock+" .rollout-text")
	if !regexp.MustCompile(`(?i)halted at 50\s*%`).MatchString(halted) {
		t.Errorf("the halted rollout reads %q: want \"halted at 50 %%\"", halted)
	}
	note := bbcRead(t, ctx, betaBlock+" .halt-note")
	t.Logf("the note beside the buttons: %q", note)
	if !regexp.MustCompile(`(?i)keep`).MatchString(note) || !regexp.MustCompile(`(?i)back`).MatchString(note) {
		t.Errorf("the note reads %q: want that testers who have it keep it, a browser never going back a version", note)
	}
	// Beside the buttons: in the rollout's part of the block, near Resume.
	gap := evalJS[float64](t, ctx, fmt.Sprintf(`(() => { const n = document.querySelector(%q).getBoundingClientRect(), b = document.querySelector(%q).getBoundingClientRect();
		return Math.max(0, Math.max(n.top, b.top) - Math.min(n.bottom, b.bottom)); })()`, betaBlock+" .halt-note", betaBlock+" .resume"))
	if gap > 120 {
		t.Errorf("the note is %.0f px from the Resume button: not beside it", gap)
	}
	if !evalJS[bool](t, ctx, fmt.Sprintf(`!!document.querySelector(%q)?.closest(".channel-rollout")`, betaBlock+" .halt-note")) {
		t.Errorf("the note is not in the rollout's part of the block")
	}

	// Resume.
	bbcClick(t, ctx, betaBlock+" .resume")
	bbkWait(t, ctx, `!/halted/i.test(`+bbcShown(betaBlock+" .rollout-text")+`) && `+bbcShown(betaBlock+" .halt")+` !== "" && `+bbcShown(betaBlock+" .resume")+` === ""`,
		"Resume never put the rollout back in progress with Halt offered")
	if c := bbcGetChannel(a, ext.ID, "beta"); c.Rollout == nil || c.Rollout.State != "active" || c.Rollout.Percent != 50 {
		t.Errorf("after Resume the API says beta's rollout is %+v", c.Rollout)
	}

	// 80, Enter pressed twice.
	net := bbcRecord(t, ctx)
	from := net.mark()
	bbcRetype(t, ctx, "#advance-beta", "80")
	bbkPress(t, ctx, kb.Enter)
	bbkPress(t, ctx, kb.Enter)
	bbkWait(t, ctx, `/80\s*%/.test(`+bbcShown(betaBlock+" .rollout-text")+`)`, "typing 80 and Enter never advanced the rollout to 80 %")
	beta = bbcGetChannel(a, ext.ID, "beta")
	if beta.Rollout == nil || beta.Rollout.Percent != 80 || beta.Rollout.State != "active" {
		t.Fatalf("after advancing to 80 the API says beta's rollout is %+v", beta.Rollout)
	}
	advances := net.since(from, "/rollout/advance")
	t.Logf("Enter twice sent %d advance requests", len(advances))
	if e := bbcRead(t, ctx, "#channels-error"); e != "" {
		t.Errorf("Enter pressed twice on 80 left the error %q", e)
	}
	bbcWantRolloutShown(t, "beta's rollout at 80 %", bbcRead(t, ctx, betaBlock+" .rollout-text"), beta)
	bbkWait(t, list, `/80\s*%/.test(`+bbcShown(row2)+`)`, "the open bundles list never showed the rollout at 80 %")
	bbcWantRolloutShown(t, "the bundles list's row #2 at 80 %", bbcRead(t, list, row2), beta)

	// 100, with the Advance button: complete.
	bbcRetype(t, ctx, "#advance-beta", "100")
	bbkClickFound(t, ctx, "the Advance button", `document.querySelector(`+strconv.Quote(betaBlock+" .rollout-advance")+`)?.querySelector("button")`)
	bbkWait(t, ctx, bbcShown(betaBlock+" .channel-rollout")+` === "" && `+bbcShown(betaBlock+" .channel-current")+` === "#2"`,
		"advancing to 100 never ended the rollout with #2 current")
	if c := bbcGetChannel(a, ext.ID, "beta"); c.CurrentBundle != 2 || c.Rollout != nil {
		t.Errorf("after 100 the API says beta is %+v (rollout %+v)", c, c.Rollout)
	}
	if e := bbcRead(t, ctx, "#channels-error"); e != "" {
		t.Errorf("after completing the page shows the error %q", e)
	}
	bbkWait(t, list, `/beta/.test(`+bbcShown(row2)+`) && !/%/.test(`+bbcShown(row2)+`)`, "the open bundles list never showed bundle #2 on beta without a rollout")
	bbkWait(t, list, `document.querySelector("#current-bundle")?.textContent.trim() === "#2"`, "the open bundles list's header never said #2 is current")
	badges := evalJS[[]string](t, list, `[...document.querySelectorAll("#bundle-rows [data-bundle]")].filter(r => r.querySelector(".badge")).map(r => r.dataset.bundle)`)
	if !slices.Equal(badges, []string{"2"}) {
		t.Errorf("rows with the current badge: %q, want only #2", badges)
	}
	t.Logf("after completing, row #2 reads %q", bbcRead(t, list, row2))
	bbcSameDocument(t, list, "the second tab")
	bbcSameDocument(t, ctx, "the Channels page")
}

// TestBlackBoxChannelsPromoteOlderRefused: promoting bundle #2 to beta,
// which serves #3, is refused with a message that browsers never go back a
// version, and nothing changes (the page and the API); a channel another
// admin makes meanwhile shows on the open page, in its blocks and among
// the promote's channels; the retry to it, chosen with the arrow keys,
// works.
func TestBlackBoxChannelsPromoteOlderRefused(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1] // Reader Mode Plus: bundles #1 to #3, #3 current
	a := bb20AdminAPI(t, m, d)
	before2 := bbcBundleOf(a, ext.ID, 2)
	ctx := adminTab(t, m, d)
	bbcOpenChannels(t, ctx, m.URL(), ext.ID)
	bbcMark(t, ctx)

	bbcRetype(t, ctx, "#promote-bundle", "2")
	bbcTabInto(t, ctx, "#promote-bundle", "promote-channel")
	bbcChooseByKeys(t, ctx, "#promote-channel", "beta")
	bbcClick(t, ctx, "#promote")
	bbkWait(t, ctx, bbcShown("#channels-error")+` !== ""`, "promoting an older bundle showed no message")
	msg := bbcRead(t, ctx, "#channels-error")
	t.Logf("the older bundle is refused with: %q", msg)
	if !regexp.MustCompile(`(?i)go back|older|newer`).MatchString(msg) {
		t.Errorf("the refusal reads %q: want why (browsers never go back a version)", msg)
	}
	if c := bbcGetChannel(a, ext.ID, "beta"); c.CurrentBundle != 3 || c.Rollout != nil {
		t.Errorf("after the refusal the API says beta is %+v (rollout %+v), want #3 and no rollout", c, c.Rollout)
	}
	if b := bbcBundleOf(a, ext.ID, 2); !slices.Equal(b.Channels, before2.Channels) {
		t.Errorf("after the refusal bundle #2 is on %q, was on %q", b.Channels, before2.Channels)
	}
	if got := bbcRead(t, ctx, bbcBlock("beta")+" .channel-current"); got != "#3" {
		t.Errorf("after the refusal beta's block says %q is current", got)
	}
	if got := bbcRead(t, ctx, bbcBlock("beta")+" .channel-rollout"); got != "" {
		t.Errorf("after the refusal beta's block shows a rollout: %q", got)
	}
	code, audit := a.call(http.MethodGet, fmt.Sprintf("/api/extensions/%d/audit", ext.ID), nil)
	if code == http.StatusOK && bytes.Contains(audit, []byte("bundle.promoted")) {
		t.Errorf("the refused promote is in the audit trail: %s", audit)
	}

	// Another admin makes a channel: the open page shows it.
	bbcCreateChannel(a, ext.ID, "nightly")
	bbkWait(t, ctx, `!!document.querySelector(`+strconv.Quote(bbcBlock("nightly"))+`)`, "a channel made through the API never showed on the open page")
	bbkWait(t, ctx, `[...document.querySelector("#promote-channel").options].some(o => o.value === "nightly")`, "the promote's channels never offered the new channel")
	bbcSameDocument(t, ctx, "the Channels page")

	// The retry: #2 to nightly, which serves nothing yet.
	bbcRetype(t, ctx, "#promote-bundle", "2")
	bbcTabInto(t, ctx, "#promote-bundle", "promote-channel")
	bbcChooseByKeys(t, ctx, "#promote-channel", "nightly")
	if v := evalJS[string](t, ctx, `document.querySelector("#promote-percent").value`); v != "" {
		bbcRetype(t, ctx, "#promote-percent", "")
	}
	bbcClick(t, ctx, "#promote")
	bbkWait(t, ctx, bbcShown(bbcBlock("nightly")+" .channel-current")+` === "#2"`, "the retry never made #2 nightly's current bundle")
	bbkWait(t, ctx, bbcShown("#channels-error")+` === ""`, "the refusal's message stayed after the retry worked")
	if c := bbcGetChannel(a, ext.ID, "nightly"); c.CurrentBundle != 2 || c.Rollout != nil {
		t.Errorf("after the retry the API says nightly is %+v", c)
	}
	if c := bbcGetChannel(a, ext.ID, "beta"); c.CurrentBundle != 3 || c.Rollout != nil {
		t.Errorf("after the retry the API says beta is %+v", c)
	}
}

// TestBlackBoxChannelsTestersFilterBackForward: with two of five testers
// on internal, choosing internal in the testers list's channel filter
// with the keyboard shows just them, each with the internal badge, and
// puts ?channel=internal in the address; after leaving for the bundles
// list, Back, Forward, Back and a reload show the same filtered list; All
// shows the five again.
func TestBlackBoxChannelsTestersFilterBackForward(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1]
	a := bb20AdminAPI(t, m, d)
	bbcCreateChannel(a, ext.ID, "internal")
	all := bbcTesters(a, ext.ID, "")
	if len(all) != 5 {
		t.Fatalf("Reader Mode Plus has testers %+v, want 5", all)
	}
	var allIDs, moved []string
	for _, tt := range all {
		allIDs = append(allIDs, strconv.FormatInt(tt.ID, 10))
	}
	for _, tt := range all[1:3] {
		bbcSetTesterChannel(a, ext.ID, tt.ID, "internal")
		moved = append(moved, strconv.FormatInt(tt.ID, 10))
	}
	sort.Strings(allIDs)
	sort.Strings(moved)
	if got := bbcTesters(a, ext.ID, "internal"); len(got) != 2 {
		t.Fatalf("the API's internal testers: %+v, want the two moved", got)
	}

	ctx := adminTab(t, m, d)
	base := fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID)
	openApp(t, ctx, base)
	rowsAre := func(ids []string) string {
		b, _ := json.Marshal(ids)
		return fmt.Sprintf(`JSON.stringify([...document.querySelectorAll("#testers [data-tester]")].map(r => r.dataset.tester).sort()) === %q`, string(b))
	}
	bbkWait(t, ctx, rowsAre(allIDs), "the testers list never showed the five testers")
	for _, id := range moved {
		if got := bbcRead(t, ctx, fmt.Sprintf(`#testers [data-tester="%s"] .tester-channel`, id)); got != "internal" {
			t.Errorf("tester %s, on internal, shows the badge %q", id, got)
		}
	}
	if id := allIDs[slices.IndexFunc(allIDs, func(s string) bool { return !slices.Contains(moved, s) })]; bbcRead(t, ctx, fmt.Sprintf(`#testers [data-tester="%s"] .tester-channel`, id)) != "" {
		t.Errorf("tester %s, on beta, shows a channel badge", id)
	}

	// The filter, with the keyboard.
	bbcTabInto(t, ctx, "#tester-search", "tester-channel")
	bbcChooseByKeys(t, ctx, "#tester-channel", "internal")
	bbkWait(t, ctx, rowsAre(moved), "choosing internal never showed just the two testers on it")
	bbkWait(t, ctx, `new URLSearchParams(location.search).get("channel") === "internal"`, "the channel filter is not in the address")
	filtered := evalJS[string](t, ctx, `location.href`)
	t.Logf("the filtered address: %s", filtered)

	restored := func(when string) {
		t.Helper()
		bbkWait(t, ctx, `document.querySelector("#tester-channel")?.value === "internal"`, when+": the filter does not say internal")
		bbkWait(t, ctx, rowsAre(moved), when+": the list is not filtered to internal")
	}
	bbcClick(t, ctx, "#nav-bundles")
	waitLocation(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	do(t, ctx, chromedp.NavigateBack())
	waitLocation(t, ctx, filtered)
	restored("after Back")
	do(t, ctx, chromedp.NavigateForward())
	waitLocation(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	bbkWait(t, ctx, `!!document.querySelector("#bundle-rows [data-bundle]")`, "Forward never showed the bundles list")
	do(t, ctx, chromedp.NavigateBack())
	waitLocation(t, ctx, filtered)
	restored("after Forward then Back")
	do(t, ctx, chromedp.Reload())
	waitLocation(t, ctx, filtered)
	restored("after a reload")

	// All again.
	bbcTabInto(t, ctx, "#tester-search", "tester-channel")
	bbcChooseByKeys(t, ctx, "#tester-channel", evalJS[string](t, ctx, `document.querySelector("#tester-channel").options[0].value`))
	bbkWait(t, ctx, rowsAre(allIDs), "choosing All never showed the five testers again")
	bbkWait(t, ctx, `!new URLSearchParams(location.search).has("channel")`, "with All chosen the address still names a channel")
}

// TestBlackBoxChannelsInviteOntoChannel: the invite form's channel, chosen
// with the arrow keys (down past internal to nightly, then back up), puts
// the new tester on internal: their row shows the internal badge after
// their name, and the API lists them on internal and not on beta.
func TestBlackBoxChannelsInviteOntoChannel(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1]
	a := bb20AdminAPI(t, m, d)
	bbcCreateChannel(a, ext.ID, "internal")
	bbcCreateChannel(a, ext.ID, "nightly")
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	bbkWait(t, ctx, `[...(document.querySelector("#invite-channel")?.options ?? [])].map(o => o.value).join() === "beta,internal,nightly"`,
		"the invite form's channel never offered beta, internal and nightly")

	const email = "lin.chen@example.com"
	bbkType(t, ctx, "#invite-email", email)
	bbkType(t, ctx, "#invite-name", "Lin Chen")
	bbcTabInto(t, ctx, "#invite-name", "invite-channel")
	bbcChooseByKeys(t, ctx, "#invite-channel", "nightly")
	bbcChooseByKeys(t, ctx, "#invite-channel", "internal")
	bbcClick(t, ctx, "#invite")
	bbkShownLink(t, ctx, "")
	lin := bbkTester(t, m, ext.ID, email)
	badge := bbkRow(lin.ID) + " .tester-channel"
	bbkWait(t, ctx, bbcShown(badge)+` === "internal"`, "the invited tester's row never showed the internal badge")
	row := bbkRowText(t, ctx, lin.ID)
	if i, j := strings.Index(row, "Lin Chen"), strings.Index(row, "internal"); i < 0 || j < i {
		t.Errorf("the row reads %q: want the badge after the name", row)
	}
	var onInternal, onBeta bool
	for _, tt := range bbcTesters(a, ext.ID, "internal") {
		if tt.Email == email {
			onInternal = tt.Channel == "internal"
		}
	}
	for _, tt := range bbcTesters(a, ext.ID, "beta") {
		onBeta = onBeta || tt.Email == email
	}
	if !onInternal || onBeta {
		t.Errorf("the API lists %s on internal: %v, on beta: %v; want internal only", email, onInternal, onBeta)
	}
	if c := bbcGetChannel(a, ext.ID, "internal"); c.Testers != 1 {
		t.Errorf("the API says internal has %d testers, want 1", c.Testers)
	}
}

// TestBlackBoxChannelsUploadPanelPublishesToAChannel: an admin's dropped
// zip goes to the channel and share chosen in the upload panel: internal
// (chosen with the arrow keys) for everyone, announced as "Testers on
// internal get it now.", beta unchanged; then beta at "150" is refused
// before anything is uploaded; fixed to 25 it starts a rollout on beta,
// announced, beta's current bundle unchanged, and the row says so.
func TestBlackBoxChannelsUploadPanelPublishesToAChannel(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1] // bundles #1 to #3, #3 current on beta
	a := bb20AdminAPI(t, m, d)
	bbcCreateChannel(a, ext.ID, "internal")
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#drop-zone`)))
	bbcMark(t, ctx)
	bbkWait(t, ctx, `[...(document.querySelector("#upload-channel")?.options ?? [])].map(o => o.value).join() === "beta,internal"`,
		"the upload panel's channel never offered beta and internal")
	net := bbcRecord(t, ctx)
	panel := func() string { return bbcRead(t, ctx, "#upload-panel") }

	// To internal, for everyone.
	bbcTabInto(t, ctx, "#upload-panel textarea", "upload-channel")
	bbcChooseByKeys(t, ctx, "#upload-channel", "internal")
	if v := evalJS[string](t, ctx, `document.querySelector("#upload-rollout").value`); v != "" {
		bbcRetype(t, ctx, "#upload-rollout", "")
	}
	dropFiles(t, ctx, bb20Zip(t, "2.0.0"))
	bbkWait(t, ctx, `/#4/.test(document.querySelector("#upload-result-title")?.textContent ?? "")`, "the zip dropped for internal was never published as #4")
	bbkWait(t, ctx, `document.querySelector("#upload-panel").innerText.includes("Testers on internal get it now.")`, "the panel never said testers on internal get it now")
	if c := bbcGetChannel(a, ext.ID, "internal"); c.CurrentBundle != 4 || c.Rollout != nil {
		t.Errorf("the API says internal is %+v, want #4 current", c)
	}
	if c := bbcGetChannel(a, ext.ID, "beta"); c.CurrentBundle != 3 || c.Rollout != nil {
		t.Errorf("a publish to internal changed beta: %+v (rollout %+v)", c, c.Rollout)
	}
	if b := bbcBundleOf(a, ext.ID, 4); !slices.Equal(b.Channels, []string{"internal"}) {
		t.Errorf("the API says bundle #4 is on %q, want internal only", b.Channels)
	}
	bbkWait(t, ctx, `/internal/.test(`+bbcShown(`#bundle-rows [data-bundle="4"] .bundle-channels`)+`)`, "row #4 never said it is on internal")
	if got := text(t, ctx, "#current-bundle"); got != "#3" {
		t.Errorf("after a publish to internal the header says %q is current, want #3 (current on beta)", got)
	}

	// To beta at 150 %: refused before any upload.
	bbcTabInto(t, ctx, "#upload-panel textarea", "upload-channel")
	bbcChooseByKeys(t, ctx, "#upload-channel", "beta")
	bbcRetype(t, ctx, "#upload-rollout", "150")
	from := net.mark()
	dropFiles(t, ctx, bb20Zip(t, "2.1.0"))
	refused := `(() => { const p = document.querySelector("#upload-panel");
		return /nothing was uploaded/i.test(p.innerText)
			|| [...p.querySelectorAll("[role=alert]")].some(e => e.checkVisibility() && e.innerText.trim() !== ""); })()`
	bbkWait(t, ctx, refused, "a share of 150 was never refused")
	t.Logf("a share of 150 is refused; the panel reads %q", panel())
	if sent := net.since(from, "PUT "); len(sent) > 0 {
		t.Errorf("a share of 150 still uploaded: %q", sent)
	}
	if sent := net.since(from, "/api/submit"); len(sent) > 0 {
		t.Errorf("a share of 150 still asked the service: %q", sent)
	}
	if bs := bbcBundles(a, ext.ID); len(bs) == 0 || bs[0].Number != 4 {
		t.Errorf("after the refused share the newest bundle is %+v, want #4", bs[:min(1, len(bs))])
	}

	// Fixed: 25.
	bbcRetype(t, ctx, "#upload-rollout", "25")
	if v := evalJS[string](t, ctx, `document.querySelector("#upload-channel").value`); v != "beta" {
		t.Errorf("after the refusal the channel is %q, want beta still", v)
	}
	dropFiles(t, ctx, bb20Zip(t, "2.1.0"))
	bbkWait(t, ctx, `/#5/.test(document.querySelector("#upload-result-title")?.textContent ?? "")`, "the zip dropped for beta at 25 % was never published as #5")
	bbkWait(t, ctx, `document.querySelector("#upload-panel").innerText.includes("It is rolling out to 25 % of beta's testers.")`,
		"the panel never said it is rolling out to 25 % of beta's testers")
	beta := bbcGetChannel(a, ext.ID, "beta")
	if beta.CurrentBundle != 3 || beta.Rollout == nil || beta.Rollout.Bundle != 5 || beta.Rollout.Percent != 25 || beta.Rollout.State != "active" {
		t.Fatalf("after the publish at 25 %% the API says beta is %+v (rollout %+v)", beta, beta.Rollout)
	}
	row5 := `#bundle-rows [data-bundle="5"] .bundle-channels`
	bbkWait(t, ctx, `/beta/.test(`+bbcShown(row5)+`) && /25\s*%/.test(`+bbcShown(row5)+`)`, "row #5 never said it is rolling out on beta at 25 %")
	bbcWantRolloutShown(t, "row #5", bbcRead(t, ctx, row5), beta)
	if got := text(t, ctx, "#current-bundle"); got != "#3" {
		t.Errorf("during the rollout the header says %q is current, want #3", got)
	}
	bbcSameDocument(t, ctx, "the extension's page")
}
