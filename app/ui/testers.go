package ui

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

const (
	testersPageSize = 100
	// searchDelay debounces the search box: one request when typing pauses.
	searchDelay = 300 * time.Millisecond
)

type testerPage = fetch.CursorPage[betaport.Tester]

type testerPages = []testerPage

// testersList is an extension's testers, as searched and filtered (cursor
// pages).
func testersList() *pageList[testerPage, betaport.Tester] {
	return &pageList[testerPage, betaport.Tester]{listSpec: listSpec[testerPage, betaport.Tester]{
		name: "testers", section: "testers-list", rowsID: "testers", label: "Testers",
		grid: "testers-grid", columns: []string{"Name", "E-mail", "Status", "Invited", ""},
		loading: "Loading testers…", end: "That is every tester.",
		pageSize: testersPageSize, items: func(page testerPage) []betaport.Tester { return page.Data },
	}}
}

// testersKeys are the pages of an extension's testers that params (q,
// status) select.
func testersKeys(id int64, params url.Values) fetch.GetKey[testerPage] {
	return fetch.CursorKeys[betaport.Tester](api.TestersPath(id), params, testersPageSize)
}

// testerID is a testers list's key.
func testerID(t betaport.Tester) int64 { return t.ID }

// TestersPage lets an admin find, invite and revoke an extension's testers.
// The list runs on the infinite model with cursor pages; the search and
// the status filter are its data source: changing them starts the list
// again from its first page (persistSize false).
type TestersPage struct {
	app.Compo

	extensionID int64
	tester      bool   // a tester opened the admins' page
	query       string // as typed
	appliedQ    string // as searched, after the debounce
	status      string
	typed       int // counts keystrokes, so only the last one searches

	testers *pageList[testerPage, betaport.Tester]
	// closeExtension closes the Query of the extension the breadcrumbs
	// name.
	closeExtension func()

	email, name string
	inviting    bool
	inviteErr   error
	invited     *api.Invited
	// linkNote says what the link shown is: an invite, a restore, a new
	// link.
	linkNote  string
	copied    bool
	revokeErr error
	// restore is the path that restores the revoked tester an invite
	// named (the server's offer instead of a plain refusal).
	restore string

	// pageCtx is the page's own context (OnNav's). Requests started from a
	// button answer through it: a row's Revoke button is gone as soon as
	// the row shows the tester revoked, and go-app ends a handler's context
	// with its element (and with the next event on it), which aborted the
	// request and dropped its answer.
	pageCtx app.Context
}

func (p *TestersPage) OnInit() { p.testers = testersList() }

func (p *TestersPage) getKey() fetch.GetKey[testerPage] {
	params := url.Values{}
	if p.appliedQ != "" {
		params.Set("q", p.appliedQ)
	}
	if p.status != "" {
		params.Set("status", p.status)
	}
	return testersKeys(p.extensionID, params)
}

// searchAgain starts the list again on the search and filter applied.
func (p *TestersPage) searchAgain() {
	if p.testers.list != nil {
		p.testers.list.SetGetKey(p.getKey())
	}
}

func (p *TestersPage) OnNav(ctx app.Context) {
	p.pageCtx = ctx
	setTitle(ctx, "Testers")
	u := ctx.Page().URL()
	path := strings.TrimPrefix(u.Path, "/extensions/")
	id, _ := strconv.ParseInt(strings.TrimSuffix(path, "/testers"), 10, 64)
	// The search and the status filter live in the address (?q=&status=),
	// so back, forward, a reload and a shared link bring the same list.
	q, status := strings.TrimSpace(u.Query().Get("q")), u.Query().Get("status")
	if id == p.extensionID && p.testers.list != nil {
		if q != p.appliedQ || status != p.status {
			if q != p.query {
				setField(ctx, "tester-search", q)
			}
			p.query, p.appliedQ, p.status = q, q, status
			p.searchAgain()
		}
		return
	}
	if q != p.query {
		setField(ctx, "tester-search", q)
	}
	p.query, p.appliedQ, p.status = q, q, status
	currentSession(ctx, func(s *api.Session) { p.tester = s != nil && s.Kind == api.KindTester })
	p.OnDismount()
	p.extensionID, p.invited, p.inviteErr = id, nil, nil
	// The breadcrumbs name the extension (openExtension remembers it).
	_, p.closeExtension = openExtension(ctx, id, func(fetch.State[betaport.Extension]) {})
	// Only the unfiltered list has a first page from the server.
	p.testers.open(ctx, p.getKey(), nil)
}

// OnPreRender renders, on the server, the first page of testers the server
// fetched for this admin.
func (p *TestersPage) OnPreRender(ctx app.Context) {
	if s, ok := prerendered[api.Session](api.PathSession); ok && s.Kind == api.KindTester {
		p.tester = true
		return
	}
	u := ctx.Page().URL()
	path := strings.TrimPrefix(u.Path, "/extensions/")
	p.extensionID, _ = strconv.ParseInt(strings.TrimSuffix(path, "/testers"), 10, 64)
	p.query, p.status = u.Query().Get("q"), u.Query().Get("status")
	if p.query != "" || p.status != "" {
		return // a filtered list loads in the browser
	}
	p.testers.prerender(p.getKey())
}

func (p *TestersPage) OnDismount() {
	if p.closeExtension != nil {
		p.closeExtension()
		p.closeExtension = nil
	}
	p.testers.close()
}

// onSearch debounces the search box.
func (p *TestersPage) onSearch(ctx app.Context, e app.Event) {
	p.query = ctx.JSSrc().Get("value").String()
	p.typed++
	mine := p.typed
	ctx.After(searchDelay, func(ctx app.Context) {
		if mine != p.typed || p.testers.list == nil {
			return // a later keystroke will search
		}
		p.appliedQ = strings.TrimSpace(p.query)
		p.searchAgain()
		p.keepInAddress(ctx)
	})
}

// keepInAddress writes the search and the filter into the address, in
// place (no new history entry per keystroke).
func (p *TestersPage) keepInAddress(ctx app.Context) {
	u := *ctx.Page().URL()
	q := u.Query()
	set := func(k, v string) {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	set("q", p.appliedQ)
	set("status", p.status)
	u.RawQuery = q.Encode()
	ctx.Page().ReplaceURL(&u)
}

func (p *TestersPage) onStatus(ctx app.Context, e app.Event) {
	p.status = ctx.JSSrc().Get("value").String()
	p.searchAgain()
	p.keepInAddress(ctx)
}

func (p *TestersPage) Render() app.UI {
	if p.tester {
		return adminsOnlyPage()
	}
	return shell("extensions",
		extensionCrumbs(p.extensionID),
		app.H1().Text("Testers"),
		extensionNav(p.extensionID, "testers"),
		p.renderInvite(),
		app.Div().Class("toolbar").Body(
			app.Div().Body(
				app.Label().For("tester-search").Text("Search"),
				typedValue(app.Input().ID("tester-search").Type("search").Placeholder("e-mail or name"), p.query).
					OnInput(p.onSearch),
			),
			app.Div().Body(
				app.Label().For("tester-status").Text("Status"),
				app.Select().ID("tester-status").OnChange(p.onStatus).Body(
					app.Option().Value("").Text("All").Selected(p.status == ""),
					app.Option().Value(betaport.TesterActive).Text("Active").Selected(p.status == betaport.TesterActive),
					app.Option().Value(betaport.TesterInvited).Text("Invited").Selected(p.status == betaport.TesterInvited),
					app.Option().Value(betaport.TesterRevoked).Text("Revoked").Selected(p.status == betaport.TesterRevoked),
				),
			),
			button().ID("refresh-testers").Type("button").Text("Refresh").OnClick(p.testers.onRetry),
		),
		app.If(p.revokeErr != nil, app.P().ID("revoke-error").Class("state state-error").Attr("role", "alert").Text(problemText(p.revokeErr))),
		p.renderList(),
	)
}

func (p *TestersPage) renderList() app.UI {
	empty := "No testers yet. Invite one above: they get a personal link to sign in with."
	if p.appliedQ != "" || p.status != "" {
		empty = "No tester matches. Clear the search or choose another status."
	}
	rows := p.testers.rows()
	return &listView[testerPage, betaport.Tester]{
		List: p.testers,
		Header: app.If(rows.Len() > 0,
			app.P().ID("testers-total").Class("muted").Text(strconv.Itoa(rows.Len())+" loaded")),
		Empty: empty,
		Row: func(t betaport.Tester) app.UI {
			return &testerRow{Tester: t, OnRevoke: p.revoke, OnRenew: p.renew, Now: p.now}
		},
		Key: testerID,
	}
}

func (p *TestersPage) renderInvite() app.UI {
	var result app.UI
	switch {
	case p.inviteErr != nil:
		result = app.Div().ID("invite-error").Class("state state-error").Attr("role", "alert").Body(
			app.P().Text(problemText(p.inviteErr)),
			app.If(p.restore != "", button().ID("restore-offer").Type("button").Text("Restore them and make a new link").OnClick(p.restoreOffered)),
		)
	case p.invited != nil:
		copyText := "Copy link"
		if p.copied {
			copyText = "Copied"
		}
		result = app.Div().ID("invite-result").Class("state").Attr("role", "status").Body(
			app.P().ID("invite-note").Text(p.linkNote+" Send this personal link to "+p.invited.Email+". It is shown only now; it signs them in without a password."),
			app.Input().ID("invite-url").ReadOnly(true).Value(p.invited.InviteURL).Aria("label", "Invite link"),
			button().ID("copy-invite").Type("button").Text(copyText).OnClick(p.copyLink),
		)
	}
	return app.Form().ID("invite-form").Class("invite").OnSubmit(p.invite).Body(
		app.H2().Text("Invite a tester"),
		app.Label().For("invite-email").Text("E-mail"),
		typedValue(app.Input().ID("invite-email").Type("email").Required(true), p.email).OnInput(ctx2str(&p.email)),
		app.Label().For("invite-name").Text("Name"),
		typedValue(app.Input().ID("invite-name").Type("text"), p.name).OnInput(ctx2str(&p.name)),
		button().ID("invite").Type("submit").Class("primary").Aria("disabled", p.inviting).Text("Invite"),
		result,
	)
}

// now is the clock an invite's age is told by.
func (p *TestersPage) now() time.Time { return time.Now() }

// invite adds the tester on top of the list at once (optimistically, with
// the list's Mutate), and takes it back if the server refuses.
func (p *TestersPage) invite(ctx app.Context, e app.Event) {
	if p.inviting {
		return
	}
	p.inviting, p.inviteErr, p.invited, p.copied, p.restore = true, nil, nil, false, ""
	c, id, in := apiClient(), p.extensionID, api.Invite{Email: p.email, Name: p.name}
	list := p.testers.list
	var before testerPages
	if list != nil {
		before = list.Snapshot().Data
		pending := betaport.Tester{ID: -1, ExtensionID: id, Email: strings.ToLower(strings.TrimSpace(in.Email)), Name: in.Name, Status: betaport.TesterInvited}
		list.Mutate(withTester(before, pending), false)
	}
	pageCtx := p.pageCtx
	ctx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		out, err := c.Invite(reqCtx, id, in)
		pageCtx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			p.inviting, p.inviteErr, p.invited, p.linkNote = false, err, out, "Invited."
			if pr, ok := api.AsProblem(err); ok && pr.Type == api.ProblemTesterRevoked {
				p.restore = pr.Restore
			}
			if list == nil {
				return
			}
			if err != nil {
				list.Mutate(before, false) // roll back
				if p.restore != "" {
					focusByID(ctx, "restore-offer")
				}
				return
			}
			p.email, p.name = "", ""
			setField(ctx, "invite-email", "")
			setField(ctx, "invite-name", "")
			list.Mutate(withTester(before, out.Tester), true)
		})
	})
}

// withTester returns pages with t first on the first page (a copy: pages
// in a snapshot are shared with the cache).
func withTester(pages testerPages, t betaport.Tester) testerPages {
	out := make(testerPages, max(len(pages), 1))
	copy(out, pages)
	first := out[0]
	first.Data = append([]betaport.Tester{t}, first.Data...)
	out[0] = first
	return out
}

// revoke marks the tester revoked at once, and rolls back on error.
func (p *TestersPage) revoke(ctx app.Context, t betaport.Tester) {
	list := p.testers.list
	if list == nil {
		return
	}
	before := list.Snapshot().Data
	revoked := t
	revoked.Status = betaport.TesterRevoked
	list.Mutate(replaceTester(before, revoked), false)
	p.revokeErr = nil
	c, pageCtx := apiClient(), p.pageCtx
	pageCtx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		err := c.Revoke(reqCtx, t.ExtensionID, t.ID)
		pageCtx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			p.revokeErr = err
			if err != nil {
				list.Mutate(before, false)
				return
			}
			list.Revalidate()
		})
	})
}

func replaceTester(pages testerPages, t betaport.Tester) testerPages {
	out := make(testerPages, len(pages))
	for i, page := range pages {
		data := make([]betaport.Tester, len(page.Data))
		for j, x := range page.Data {
			if x.ID == t.ID {
				x = t
			}
			data[j] = x
		}
		page.Data = data
		out[i] = page
	}
	return out
}

// restoreOffered restores the revoked tester an invite named.
func (p *TestersPage) restoreOffered(ctx app.Context, e app.Event) {
	if p.restore == "" {
		return
	}
	path := p.restore
	p.email, p.name = "", ""
	setField(ctx, "invite-email", "")
	setField(ctx, "invite-name", "")
	p.renewAt(path, "Restored.")
}

// renew gives the tester of a row a new link: a restore when revoked, a
// new invite link otherwise (the old one stops working).
func (p *TestersPage) renew(t betaport.Tester) {
	if t.Status == betaport.TesterRevoked {
		p.renewAt(api.TesterRestorePath(t.ExtensionID, t.ID), "Restored.")
		return
	}
	p.renewAt(api.TesterInvitePath(t.ExtensionID, t.ID), "New link made; the old one no longer works.")
}

func (p *TestersPage) renewAt(path, note string) {
	p.revokeErr, p.inviteErr, p.restore = nil, nil, ""
	c, pageCtx, list := apiClient(), p.pageCtx, p.testers.list
	pageCtx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		out, err := c.Renew(reqCtx, path)
		pageCtx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			if err != nil {
				p.revokeErr = err
				return
			}
			p.invited, p.linkNote, p.copied = out, note, false
			if list != nil {
				list.Mutate(replaceTester(list.Snapshot().Data, out.Tester), true)
			}
			focusByID(ctx, "invite-url")
		})
	})
}

func (p *TestersPage) copyLink(ctx app.Context, e app.Event) {
	if p.invited == nil {
		return
	}
	app.Window().Get("navigator").Get("clipboard").Call("writeText", p.invited.InviteURL)
	p.copied = true
}
