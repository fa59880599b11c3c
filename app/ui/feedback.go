package ui

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

type feedbackPage = model.FeedbackPage

// feedbackList is an extension's reports from testers, newest first
// (cursor pages), windowed as the other lists: how the list renders.
func feedbackList() *pageList[feedbackPage, betaport.Feedback] {
	return &pageList[feedbackPage, betaport.Feedback]{listSpec: listSpec[feedbackPage, betaport.Feedback]{
		name: "feedback", section: "feedback-list", rowsID: "reports", label: "Reports",
		grid: "feedback-grid", columns: []string{"Status", "Tester", "Build", "Received", "Report", ""},
		loading: "Loading reports…", end: "That is every report.",
		pageSize: model.FeedbackPageSize, items: model.FeedbackOf,
	}}
}

// FeedbackPage is the admins' list of what testers reported
// (/extensions/{id}/feedback), and one report opened in its viewer
// (/extensions/{id}/feedback/{report}). Its state and steps are a
// model.Feedback.
type FeedbackPage struct {
	app.Compo

	m       *model.Feedback
	reports *pageList[feedbackPage, betaport.Feedback]
	live    func()
	liveID  int64
}

func (p *FeedbackPage) OnInit() { p.reports = feedbackList() }

func (p *FeedbackPage) page(ctx app.Context) *model.Feedback {
	if p.m != nil {
		return p.m
	}
	var cache *fetch.Cache
	if app.IsClient {
		cache = listCache()
	}
	p.m = model.NewFeedback(model.FeedbackConfig{
		Env: pageEnv(ctx), Session: appSession(ctx),
		Cache: cache, Fallback: prerenderedPages[feedbackPage], MaxPages: keptPages(model.FeedbackPageSize),
		Title:    func(t string) { setTitle(ctx, t) },
		Navigate: ctx.Navigate,
		Read:     func(e betaport.Extension) { rememberExtension(&e) },
		Loaded:   func() { restoreScroll(ctx, ctx.Page().URL().Path) },
		Address: func(q model.FeedbackQuery) {
			u := *ctx.Page().URL()
			u.RawQuery = q.Values().Encode()
			ctx.Page().ReplaceURL(&u)
		},
		SetSearch: func(q string) { setField(ctx, "feedback-search", q) },
		Focus: func(f model.FeedbackFocus, id int64) {
			switch f {
			case model.FeedbackFocusViewer:
				focusByID(ctx, "report-viewer")
			case model.FeedbackFocusRow:
				focusFirst(ctx, `[data-report="`+strconv.FormatInt(id, 10)+`"] a`)
			case model.FeedbackFocusConfirmDelete:
				focusByID(ctx, "confirm-delete-report")
			}
		},
	})
	return p.m
}

// feedbackAddress reads a feedback page's address: the extension, the
// report opened (0: none) and the list's query.
func feedbackAddress(u *url.URL) (id, report int64, q model.FeedbackQuery) {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) >= 3 {
		if n, ok := api.ParseID(parts[1]); ok {
			id = n
		}
	}
	if len(parts) == 4 {
		if n, ok := api.ParseID(parts[3]); ok {
			report = n
		}
	}
	return id, report, model.ParseFeedbackQuery(u.Query())
}

func (p *FeedbackPage) OnNav(ctx app.Context) {
	id, report, q := feedbackAddress(ctx.Page().URL())
	m := p.page(ctx)
	m.Open(id, q, report)
	if p.live == nil || p.liveID != id {
		p.stopLive()
		p.live, p.liveID = listenEvents(ctx, id, map[string]func(api.Revision, bool){"feedback": m.Live.Event}), id
	}
}

func (p *FeedbackPage) OnPreRender(ctx app.Context) {
	id, report, q := feedbackAddress(ctx.Page().URL())
	s, ok := prerendered[api.Session](api.PathSession)
	m := p.page(ctx)
	m.Prerender(id, q, ok && s.Kind == api.KindTester)
	m.Viewing = report
}

func (p *FeedbackPage) stopLive() {
	if p.live != nil {
		p.live()
		p.live = nil
	}
}

func (p *FeedbackPage) OnDismount() {
	p.stopLive()
	if p.m != nil {
		p.m.Close()
	}
}

func (p *FeedbackPage) state() *model.Feedback {
	if p.m == nil {
		return &model.Feedback{}
	}
	return p.m
}

func (p *FeedbackPage) onSearch(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.Search(ctx.JSSrc().Get("value").String())
	}
}

func (p *FeedbackPage) onStatus(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.FilterStatus(ctx.JSSrc().Get("value").String())
	}
}

func (p *FeedbackPage) clearBundle(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.FilterBundle(0)
	}
}

func (p *FeedbackPage) clearTester(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.FilterTester(0)
	}
}

func (p *FeedbackPage) Render() app.UI {
	m := p.state()
	if m.Tester {
		return adminsOnlyPage()
	}
	p.reports.list, p.reports.state = m.Infinite(), m.List
	var chips []app.UI
	if n := m.Applied.Bundle; n != 0 {
		chips = append(chips, button().ID("clear-bundle").Type("button").Class("chip").
			Aria("label", fmt.Sprintf("Build #%d: show every build", n)).Text(fmt.Sprintf("Build #%d ✕", n)).OnClick(p.clearBundle))
	}
	if id := m.Applied.Tester; id != 0 {
		who := m.TesterEmail()
		if who == "" {
			who = "tester " + strconv.FormatInt(id, 10)
		}
		chips = append(chips, button().ID("clear-tester").Type("button").Class("chip").
			Aria("label", who+": show every tester's reports").Text(who+" ✕").OnClick(p.clearTester))
	}
	return shell("extensions",
		extensionCrumbs(m.ExtensionID),
		app.H1().Text("Feedback"),
		extensionNav(m.ExtensionID, "feedback"),
		app.Div().Class("toolbar").Body(
			app.Div().Body(
				app.Label().For("feedback-search").Text("Search"),
				typedValue(app.Input().ID("feedback-search").Type("search").Placeholder("text or e-mail"), m.Query).OnInput(p.onSearch),
			),
			app.Div().Body(
				app.Label().For("feedback-status").Text("Status"),
				app.Select().ID("feedback-status").OnChange(p.onStatus).Body(
					app.Option().Value("").Text("All").Selected(m.Applied.Status == ""),
					app.Option().Value(betaport.FeedbackOpen).Text("Open (new and seen)").Selected(m.Applied.Status == betaport.FeedbackOpen),
					app.Option().Value(betaport.FeedbackNew).Text("New").Selected(m.Applied.Status == betaport.FeedbackNew),
					app.Option().Value(betaport.FeedbackSeen).Text("Seen").Selected(m.Applied.Status == betaport.FeedbackSeen),
					app.Option().Value(betaport.FeedbackResolved).Text("Resolved").Selected(m.Applied.Status == betaport.FeedbackResolved),
				),
			),
			app.If(len(chips) > 0, app.Div().Class("chips").Body(chips...)),
			button().ID("refresh-feedback").Type("button").Text("Refresh").OnClick(p.reports.onRetry),
		),
		p.renderViewer(m),
		p.renderList(m),
	)
}

func (p *FeedbackPage) renderList(m *model.Feedback) app.UI {
	empty := "No reports yet. Testers send them from their builds page, or from inside the extension (see the README's Feedback)."
	if m.Filtered() {
		empty = "No report matches. Clear the search or choose another status."
	}
	rows := p.reports.rows()
	return &listView[feedbackPage, betaport.Feedback]{
		List: p.reports,
		Header: app.If(rows.Len() > 0,
			app.P().ID("feedback-total").Class("muted").Text(strconv.Itoa(rows.Len())+" loaded")),
		Empty: empty,
		Row: func(f betaport.Feedback) app.UI {
			return &reportRow{Report: f, Href: m.ViewPath(f.ID), Open: f.ID == m.Viewing}
		},
		Key: model.FeedbackID,
	}
}

// reportRow is one report on the list: a link that opens it in the viewer.
type reportRow struct {
	app.Compo

	Report betaport.Feedback
	Href   string
	Open   bool
}

func (r *reportRow) Render() app.UI {
	f := r.Report
	text := model.FirstLine(f.Text, 140)
	if text == "" {
		text = "(a screenshot, no text)"
	}
	shots := ""
	if n := len(f.Screenshots); n > 0 {
		shots = fmt.Sprintf("%d 📷", n)
	}
	row := app.Div().Class("row feedback-grid").DataSet("report", f.ID)
	if r.Open {
		row = row.Class("row-current")
	}
	return row.Body(
		cell(app.Span().Class("badge badge-"+f.Status).Text(model.FeedbackStatusText(f.Status))),
		cell(app.Span().Title(f.TesterEmail).Text(f.TesterEmail)),
		cell(app.Span().Title(model.ReportBuild(f)).Text(model.ReportBuild(f))),
		cell(app.Span().Class("muted").Title(f.CreatedAt.Local().Format("2 Jan 2006 15:04")).Text(ageText(time.Since(f.CreatedAt)))),
		cell(app.A().Class("report-link").Href(r.Href).Title(text).Aria("label", "Report from "+f.TesterEmail+": "+text).Text(text)),
		cell(app.Span().Class("muted").Text(shots)),
	)
}

// renderViewer is the report opened: its text, what Betaport knew of the
// build and the browser, its screenshots (the arrow keys go between them),
// and its status. Escape, Close and Back close it.
func (p *FeedbackPage) renderViewer(m *model.Feedback) app.UI {
	if m.Viewing == 0 {
		return nil
	}
	body := []app.UI{
		app.Div().Class("viewer-head").Body(
			app.H2().ID("report-title").Text(fmt.Sprintf("Report #%d", m.Viewing)),
			app.A().ID("close-report").Class("button").Href(m.ViewPath(0)).Text("Close"),
		),
	}
	switch f := m.Report; {
	case f == nil && m.ViewErr != nil:
		body = append(body, statusView("error", problemText(m.ViewErr)))
	case f == nil:
		body = append(body, statusView("loading", "Loading the report…"))
	default:
		body = append(body, p.reportView(m, f)...)
	}
	return app.Section().ID("report-viewer").Class("viewer").TabIndex(-1).Attr("role", "region").
		Aria("labelledby", "report-title").OnKeyDown(p.onViewerKey).Body(body...)
}

func (p *FeedbackPage) reportView(m *model.Feedback, f *betaport.Feedback) []app.UI {
	facts := []string{model.FeedbackStatusText(f.Status), "from " + f.TesterEmail, "on " + model.ReportBuild(*f)}
	if f.Browser != "" || f.OS != "" {
		facts = append(facts, strings.TrimSpace(f.Browser+" on "+f.OS))
	}
	facts = append(facts, map[string]string{betaport.FeedbackFromExtension: "sent from the extension"}[f.Source], f.CreatedAt.Local().Format("2 Jan 2006 15:04"))
	// Each button keeps its place, hidden when it does not apply: go-app
	// keeps an element's handler when the element is reused for another
	// button (go-app #1107).
	newText := "Mark new"
	if f.Status == betaport.FeedbackResolved {
		newText = "Reopen"
	}
	actions := []app.UI{
		button().ID("report-seen").Type("button").Hidden(f.Status != betaport.FeedbackNew).Aria("disabled", m.Moving).Text("Mark seen").
			OnClick(func(ctx app.Context, e app.Event) { m.SetStatus(betaport.FeedbackSeen) }),
		button().ID("report-resolved").Type("button").Hidden(f.Status == betaport.FeedbackResolved).Aria("disabled", m.Moving).Text("Resolve").
			OnClick(func(ctx app.Context, e app.Event) { m.SetStatus(betaport.FeedbackResolved) }),
		button().ID("report-new").Type("button").Hidden(f.Status == betaport.FeedbackNew).Aria("disabled", m.Moving).Text(newText).
			OnClick(func(ctx app.Context, e app.Event) { m.SetStatus(betaport.FeedbackNew) }),
	}
	actions = append(actions, button().ID("delete-report").Type("button").Class("danger").Aria("expanded", m.AskingDelete).
		Text("Delete…").OnClick(func(ctx app.Context, e app.Event) { m.AskDelete() }))
	out := []app.UI{
		app.P().ID("report-facts").Class("muted").Text(strings.Join(nonEmpty(facts), " · ")),
		app.Pre().ID("report-text").Class("report-text").Text(f.Text),
		app.P().Class("report-filters").Body(
			app.A().ID("only-tester").Href(onlyPath(m, model.FeedbackQuery{Tester: f.TesterID})).Text("Only "+f.TesterEmail+"'s reports"),
			app.If(f.BundleNumber != 0, app.Text(" · "), app.A().ID("only-build").Href(onlyPath(m, model.FeedbackQuery{Bundle: f.BundleNumber})).
				Text(fmt.Sprintf("Only build #%d", f.BundleNumber))),
		),
	}
	if n := len(f.Screenshots); n > 0 {
		i := m.Shot
		sc := f.Screenshots[i]
		out = append(out, app.Figure().ID("report-shot").Body(
			app.Img().ID("report-shot-image").Src(m.ScreenshotPath(i)).Width(sc.Width).Height(sc.Height).
				Alt(fmt.Sprintf("Screenshot %d of %d, %d×%d", i+1, n, sc.Width, sc.Height)),
			app.FigCaption().ID("report-shot-caption").Text(fmt.Sprintf("Screenshot %d of %d (%d×%d) · ← → to go between them", i+1, n, sc.Width, sc.Height)),
		))
		if n > 1 {
			out = append(out, app.Div().Class("shot-thumbs").Body(app.Range(f.Screenshots).Slice(func(j int) app.UI {
				return button().Type("button").Class("shot-thumb").Aria("pressed", j == i).
					Aria("label", fmt.Sprintf("Screenshot %d", j+1)).Text(strconv.Itoa(j + 1)).
					OnClick(func(ctx app.Context, e app.Event) { m.ShowShot(j) })
			})))
		}
	}
	out = append(out, app.Div().Class("viewer-actions").Body(actions...))
	if m.AskingDelete {
		out = append(out, confirmPop("Delete report #"+strconv.FormatInt(f.ID, 10)+"?",
			"The report and its screenshots are deleted for good; the trail keeps that you did.",
			button().ID("confirm-delete-report").Type("button").Class("danger").Aria("disabled", m.Moving).Text("Yes, delete").
				OnClick(func(ctx app.Context, e app.Event) { m.DeleteReport() }),
			button().ID("keep-report").Type("button").Text("Keep").OnClick(func(ctx app.Context, e app.Event) { m.KeepReport() }),
		))
	}
	if m.MoveErr != nil {
		out = append(out, app.P().ID("report-error").Class("state state-error").Attr("role", "alert").Text(problemText(m.MoveErr)))
	}
	return out
}

// onlyPath is the list's address filtered as q says (the search and the
// status kept).
func onlyPath(m *model.Feedback, q model.FeedbackQuery) string {
	q.Q, q.Status = m.Applied.Q, m.Applied.Status
	return "/extensions/" + strconv.FormatInt(m.ExtensionID, 10) + "/feedback?" + q.Values().Encode()
}

func nonEmpty(list []string) []string {
	var out []string
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// onViewerKey: ← and → go between the screenshots, Escape closes.
func (p *FeedbackPage) onViewerKey(ctx app.Context, e app.Event) {
	m := p.m
	if m == nil {
		return
	}
	tag := strings.ToLower(e.Get("target").Get("tagName").String())
	if tag == "input" || tag == "textarea" || tag == "select" {
		return
	}
	switch e.Get("key").String() {
	case "ArrowRight":
		m.NextShot()
	case "ArrowLeft":
		m.PrevShot()
	case "Escape":
		ctx.Navigate(m.ViewPath(0))
	default:
		return
	}
	e.PreventDefault()
}
