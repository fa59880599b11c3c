package ui

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
)

// TestersPage lets an admin invite and revoke an extension's testers.
type TestersPage struct {
	app.Compo

	extensionID int64
	testers     []api.Tester
	next        string
	loaded      bool
	err         error

	email, name string
	inviting    bool
	inviteErr   error
	invited     *api.Invited
	copied      bool
}

func (p *TestersPage) OnNav(ctx app.Context) {
	path := strings.TrimPrefix(ctx.Page().URL().Path, "/extensions/")
	p.extensionID, _ = strconv.ParseInt(strings.TrimSuffix(path, "/testers"), 10, 64)
	p.testers, p.next, p.loaded, p.err, p.invited = nil, "", false, nil, nil
	p.load(ctx, "")
}

func (p *TestersPage) load(ctx app.Context, cursor string) {
	c, id := apiClient(), p.extensionID
	q := url.Values{"limit": {"50"}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	ctx.Async(func() {
		page, err := c.Testers(ctx, id, q)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			p.loaded, p.err = true, err
			if err == nil {
				p.testers = append(p.testers, page.Data...)
				p.next = page.NextCursor
			}
		})
	})
}

func (p *TestersPage) Render() app.UI {
	var list app.UI
	switch {
	case p.err != nil && len(p.testers) == 0:
		list = statusView("error", problemText(p.err))
	case !p.loaded:
		list = statusView("loading", "Loading testers…")
	case len(p.testers) == 0:
		list = statusView("empty", "No testers yet. Invite one above: they get a personal link to sign in with.")
	default:
		list = app.Div().Body(
			app.Table().Class("list").ID("testers").Body(
				app.THead().Body(app.Tr().Body(
					app.Th().Text("Name"), app.Th().Text("E-mail"), app.Th().Text("Status"), app.Th(),
				)),
				app.TBody().Body(app.Range(p.testers).Slice(func(i int) app.UI {
					return &testerRow{Tester: p.testers[i], OnRevoke: p.revoked}
				})),
			),
			app.If(p.next != "", app.Button().ID("load-more").Type("button").Text("Load more").OnClick(func(ctx app.Context, e app.Event) {
				p.load(ctx, p.next)
			})),
		)
	}
	return shell("extensions",
		app.P().Class("crumbs").Body(
			app.A().Href("/").Text("Extensions"), app.Text(" / "),
			app.A().Href("/extensions/"+strconv.FormatInt(p.extensionID, 10)).Text("Extension"), app.Text(" / "),
		),
		app.H1().Text("Testers"),
		p.renderInvite(),
		list,
	)
}

func (p *TestersPage) renderInvite() app.UI {
	var result app.UI
	switch {
	case p.inviteErr != nil:
		result = app.P().ID("invite-error").Class("state state-error").Attr("role", "alert").Text(problemText(p.inviteErr))
	case p.invited != nil:
		copyText := "Copy link"
		if p.copied {
			copyText = "Copied"
		}
		result = app.Div().ID("invite-result").Class("state").Attr("role", "status").Body(
			app.P().Text("Send this personal link to "+p.invited.Email+". It is shown only now; it signs them in without a password."),
			app.Input().ID("invite-url").ReadOnly(true).Value(p.invited.InviteURL).Aria("label", "Invite link"),
			app.Button().ID("copy-invite").Type("button").Text(copyText).OnClick(p.copyLink),
		)
	}
	return app.Form().ID("invite-form").Class("invite").OnSubmit(p.invite).Body(
		app.H2().Text("Invite a tester"),
		app.Label().For("invite-email").Text("E-mail"),
		app.Input().ID("invite-email").Type("email").Required(true).Value(p.email).OnInput(ctx2str(&p.email)),
		app.Label().For("invite-name").Text("Name"),
		app.Input().ID("invite-name").Type("text").Value(p.name).OnInput(ctx2str(&p.name)),
		app.Button().ID("invite").Type("submit").Class("primary").Disabled(p.inviting).Text("Invite"),
		result,
	)
}

func (p *TestersPage) invite(ctx app.Context, e app.Event) {
	e.PreventDefault()
	p.inviting, p.inviteErr, p.invited, p.copied = true, nil, nil, false
	c, id, in := apiClient(), p.extensionID, api.Invite{Email: p.email, Name: p.name}
	ctx.Async(func() {
		out, err := c.Invite(ctx, id, in)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			p.inviting, p.inviteErr, p.invited = false, err, out
			if err == nil {
				p.email, p.name = "", ""
				p.testers = append([]api.Tester{out.Tester}, p.testers...)
			}
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

// revoked replaces a tester's row after a revoke.
func (p *TestersPage) revoked(t api.Tester) {
	for i := range p.testers {
		if p.testers[i].ID == t.ID {
			p.testers[i] = t
		}
	}
}

// testerRow is its own component so its handlers always see its own tester
// (closures made in a loop go stale: go-app #1107).
type testerRow struct {
	app.Compo

	Tester   api.Tester
	OnRevoke func(api.Tester)
	busy     bool
	err      error
}

func (r *testerRow) Render() app.UI {
	t := r.Tester
	var action app.UI = app.Text("")
	if t.Status != api.TesterRevoked {
		action = app.Button().Type("button").Class("revoke").Disabled(r.busy).
			Aria("label", "Revoke "+t.Email).Text("Revoke").OnClick(r.revoke)
	}
	if r.err != nil {
		action = app.Span().Class("state-error").Attr("role", "alert").Text(problemText(r.err))
	}
	return app.Tr().DataSet("tester", t.ID).Body(
		app.Td().Text(t.Name),
		app.Td().Text(t.Email),
		app.Td().Body(app.Span().Class("badge badge-"+t.Status).Text(t.Status)),
		app.Td().Body(action),
	)
}

func (r *testerRow) revoke(ctx app.Context, e app.Event) {
	r.busy = true
	c, t := apiClient(), r.Tester
	ctx.Async(func() {
		err := c.Revoke(ctx, t.ExtensionID, t.ID)
		ctx.Dispatch(func(ctx app.Context) {
			r.busy, r.err = false, err
			if err == nil {
				t.Status = api.TesterRevoked
				r.Tester = t
				if r.OnRevoke != nil {
					r.OnRevoke(t)
				}
			}
		})
	})
}
