// Package ui is Betaport's browser app: go-app components and routes. The
// server registers the same routes to prerender pages; the wasm binary
// registers them to take the pages over. Nothing here may import server code.
package ui

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/model"
)

var registerOnce sync.Once

// Register registers the app's routes with go-app. It is safe to call more
// than once.
func Register() {
	registerOnce.Do(func() {
		app.Route("/", &Home{})
		app.Route("/login", &LoginPage{})
		app.Route(PathEnded, &EndedPage{})
		app.Route("/builds", &BuildsPage{})
		// An id as the API spells it, no leading zero: /extensions/07 is
		// an address that names nothing, as /api/extensions/07 is.
		app.RouteWithRegexp(`^/extensions/[1-9]\d*$`, &ExtensionPage{})
		app.RouteWithRegexp(`^/extensions/[1-9]\d*/testers$`, &TestersPage{})
		app.RouteWithRegexp(`^/extensions/[1-9]\d*/pages$`, &ClassicBundles{})
		app.RouteWithRegexp(`^/extensions/[1-9]\d*/settings$`, &SettingsPage{})
		app.RouteWithRegexp(`^/extensions/[1-9]\d*/adoption$`, &AdoptionPage{})
		app.RouteWithRegexp(`^/extensions/[1-9]\d*/channels$`, &ChannelsPage{})
		app.RouteWithRegexp(`^/extensions/[1-9]\d*/feedback(/[1-9]\d*)?$`, &FeedbackPage{})
		// Last, so every address above wins: any other is a page that
		// says so, not go-app's bare 404.
		app.RouteWithRegexp(`^/`, &NotFoundPage{})
		if app.IsClient {
			notePrerenderedFields()
			readPrerendered()
			preventNativeSubmits()
			feedBrowserEvents()
		}
	})
}

// preventNativeSubmits stops every form from submitting the page. go-app
// runs event handlers on its UI goroutine after the browser's event has
// returned, too late for Event.PreventDefault, and every form of this app
// is handled in Go. Pressing Enter in a field still fires OnSubmit.
func preventNativeSubmits() {
	app.Window().Get("document").Call("addEventListener", "submit", app.FuncOf(func(this app.Value, args []app.Value) any {
		args[0].Call("preventDefault")
		return nil
	}), true)
}

// apiClient returns a client of the service that served the page. The
// browser's origin is the API's origin: there is no other host to configure.
func apiClient() *client.Client {
	if app.IsServer {
		return nil
	}
	u := app.Window().URL()
	c := client.New(u.Scheme + "://" + u.Host)
	c.HTTP = pageFetch{}
	return c
}

// pageEnv connects a page's model (app/model) to the component that shows
// it: requests go to the page's service, live as long as the component
// (ctx), and answer on the UI goroutine through ctx.Dispatch.
func pageEnv(ctx app.Context) model.Env {
	return model.Env{
		Client:   apiClient(),
		Context:  ctx,
		Dispatch: func(f func()) { ctx.Dispatch(func(app.Context) { f() }) },
		Async:    ctx.Async,
	}
}

// shell is the layout around every page: the top bar with navigation, then
// the page's content.
func shell(active string, content ...app.UI) app.UI {
	runsOn := "server"
	if app.IsClient {
		runsOn = "client"
	}
	return app.Div().Class("shell").DataSet("app", runsOn).Body(
		app.Header().Class("topbar").Body(
			app.A().Href("/").Class("brand").Body(
				app.Img().Src("/web/icon.svg").Alt("").Width(28).Height(28),
				app.Span().Text("Betaport"),
			),
			&Nav{Active: active},
		),
		app.Main().ID("main").TabIndex(-1).Body(content...),
	)
}

// button is every button of the app. The server renders it disabled: until
// the wasm has taken the page over, pressing it could do nothing, and a
// form's native submit would send the fields in the address (a password
// included). Disabled, it is visibly inactive and blocks that submit; the
// app's first render replaces it with the working one. Links work before.
func button() app.HTMLButton { return app.Button().Disabled(app.IsServer) }

func navLink(href, text string, current bool) app.UI {
	a := app.A().Href(href).Text(text)
	if current {
		a = a.Aria("current", "page").Class("current")
	}
	return a
}

// statusView is the loading, empty and error states every page shares.
func statusView(kind, text string) app.HTMLP {
	role := "status"
	if kind == "error" {
		role = "alert"
	}
	return app.P().Class("state state-"+kind).Attr("role", role).Text(text)
}

// problemText is what a person reads when a request failed.
func problemText(err error) string {
	if err == nil {
		return ""
	}
	var refused *betaport.Error
	if errors.As(err, &refused) {
		return refused.Message // said by the page itself, before sending
	}
	msg := err.Error()
	if strings.Contains(msg, "Failed to fetch") || strings.Contains(msg, "net/http") {
		return "The service cannot be reached. Check your connection and try again."
	}
	return msg
}

func itoa(n int) string { return strconv.Itoa(n) }

// pagePaths are the addresses of the app's pages (see Register).
var pagePaths = regexp.MustCompile(`^(/|/login|/ended|/builds|/extensions/\d+(/testers|/pages|/adoption|/settings|/channels|/feedback(/[1-9]\d*)?)?)$`)

// KnownPage reports whether path is one of the app's pages; the server
// answers any other with NotFoundPage and a 404 status.
func KnownPage(path string) bool { return pagePaths.MatchString(path) }

// SignInFirst reports whether path is a page only someone signed in can
// see (an admin's or a tester's): a visitor signed out is sent to sign in.
func SignInFirst(path string) bool {
	return KnownPage(path) && path != model.PathLogin && path != PathEnded
}

// NotFoundPage is shown for an address that names no page: it says so and
// offers the way back.
type NotFoundPage struct {
	app.Compo
	path string
}

func (p *NotFoundPage) OnPreRender(ctx app.Context) { p.path = ctx.Page().URL().Path }
func (p *NotFoundPage) OnNav(ctx app.Context) {
	p.path = ctx.Page().URL().Path
	setTitle(ctx, "Page not found")
}

// OnDismount gives the title back: the other pages do not all set one.
func (p *NotFoundPage) OnDismount() {
	if app.IsClient {
		app.Window().Get("document").Set("title", "Betaport")
	}
}

func (p *NotFoundPage) Render() app.UI {
	return shell("",
		app.H1().ID("not-found").Text("Page not found"),
		app.P().Text("There is no page at "+p.path+". The link may be old or mistyped."),
		app.P().Body(app.A().ID("back-home").Href("/").Text("Go to your extensions")),
	)
}

// adminsOnlyPage is what a tester sees on an admins' page: no admin
// controls, a sentence that says why, and the way to their builds.
func adminsOnlyPage() app.UI {
	return shell("",
		app.H1().ID("admins-only").Text("This page is for the extension's admins"),
		app.P().Text("You are signed in as a tester. Your builds are on your builds page."),
		app.P().Body(app.A().ID("to-builds").Href("/builds").Text("Go to your builds")),
	)
}

// setTitle titles the page, so tabs, history and screen readers tell
// pages apart.
func setTitle(ctx app.Context, title string) {
	ctx.Page().SetTitle(title + " · Betaport")
	path := ctx.Page().URL().Path
	if !app.IsClient {
		return
	}
	if path == shownPath {
		// The same page, with a title that came with its data (the
		// extension's name): the focus stays; what was announced is
		// corrected.
		if announced != "" && announced != title {
			ctx.Defer(func(app.Context) { announce(title) })
		}
		return
	}
	first := shownPath == ""
	shownPath = path
	if first {
		return // the page the browser loaded: it reads it itself
	}
	// In-app navigation changed the page under the person: the focus goes
	// to the new page's main content (the next Tab starts there), and the
	// new page's title is announced.
	ctx.Defer(func(app.Context) {
		if main := app.Window().GetElementByID("main"); main != nil && main.Truthy() {
			main.Call("focus", map[string]any{"preventScroll": true})
		}
		announce(title)
	})
}

// shownPath is the path of the page last titled; announced is what the
// live region said last.
var shownPath, announced string

// announce says text through a live region outside the app's tree, which
// lives as long as the document (a region rendered with each page would be
// new on every page, and new regions are not read).
func announce(text string) {
	doc := app.Window().Get("document")
	region := doc.Call("getElementById", "route-announcer")
	if region.IsNull() {
		region = doc.Call("createElement", "p")
		region.Set("id", "route-announcer")
		region.Set("className", "visually-hidden")
		region.Call("setAttribute", "role", "status")
		doc.Get("body").Call("appendChild", region)
	}
	region.Set("textContent", text)
	announced = text
}

// extensionNav links an extension's pages, the current one marked, so
// testers and settings are one step from the bundles.
func extensionNav(id int64, current string) app.UI {
	base := "/extensions/" + strconv.FormatInt(id, 10)
	link := func(name, href, text string) app.UI {
		a := app.A().ID("nav-" + name).Href(href).Text(text)
		if name == current {
			a = a.Aria("current", "page").Class("current")
		}
		return app.Li().Body(a)
	}
	return app.Nav().Class("ext-nav").Aria("label", "Extension").Body(app.Ul().Body(
		link("bundles", base, "Bundles"),
		link("pages", base+"/pages", "Page by page"),
		link("testers", base+"/testers", "Testers"),
		link("channels", base+"/channels", "Channels"),
		link("adoption", base+"/adoption", "Adoption"),
		link("feedback", base+"/feedback", "Feedback"),
		link("settings", base+"/settings", "Settings"),
	))
}

// extensionNames remembers the names of extensions this tab has loaded, so
// a page reached from the extension's page names it in its breadcrumbs at
// once, before (or without) loading the extension itself.
var extensionNames = map[int64]string{}

// rememberExtension records an extension's name for the breadcrumbs. Only
// in the browser: the server renders for many people at once.
func rememberExtension(e *betaport.Extension) {
	if e != nil && app.IsClient {
		extensionNames[e.ID] = e.Name
	}
}

// extensionCrumbs are the breadcrumbs of an extension's sub-pages:
// Extensions / its name /. An extension not loaded yet is named by its
// number, never by a word that repeats the first crumb.
func extensionCrumbs(id int64) app.UI {
	name := extensionName(id, nil)
	return app.P().Class("crumbs").Body(
		app.A().Href("/").Text("Extensions"), app.Text(" / "),
		app.A().ID("extension-link").Href("/extensions/"+strconv.FormatInt(id, 10)).Text(name), app.Text(" / "),
	)
}

// extensionName is how a page names extension id: as known, read (when
// read is the extension), or, on the server, from the answers the page was
// rendered with, so the server's page names it as the app will; else
// "Extension #id".
func extensionName(id int64, read *betaport.Extension) string {
	if read != nil {
		return read.Name
	}
	name, ok := extensionNames[id]
	if app.IsServer {
		var e betaport.Extension
		if e, ok = prerendered[betaport.Extension](api.ExtensionPath(id)); ok {
			name = e.Name
		}
	}
	if !ok {
		name = "Extension #" + strconv.FormatInt(id, 10)
	}
	return name
}

// typedValue gives a text field its value in the server's render only. In
// the browser the field keeps what is typed: a value rendered from state
// lags the keys by a frame or two, and go-app would write it back over the
// keys typed since (a fast typist lost characters). Code that changes a
// field's value from elsewhere (the address, a reset after sending) writes
// it with setField.
func typedValue(in app.HTMLInput, v string) app.HTMLInput {
	if app.IsServer {
		return in.Value(v)
	}
	return in
}

// setField writes v into the field id, after the render that shows it.
func setField(ctx app.Context, id, v string) {
	if !app.IsClient {
		return
	}
	ctx.Defer(func(app.Context) {
		f := app.Window().Get("document").Call("getElementById", id)
		if f.Truthy() && f.Get("value").String() != v {
			f.Set("value", v)
		}
	})
}
