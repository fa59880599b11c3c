package ui

import (
	"fmt"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
)

// Home lists the extensions the signed-in person may see; its model is a
// model.Extensions.
type Home struct {
	app.Compo

	m *model.Extensions
}

// OnNav loads the list each time the page is shown.
func (h *Home) OnNav(ctx app.Context) {
	if h.m == nil {
		h.m = model.NewExtensions(model.ExtensionsConfig{
			Env: pageEnv(ctx), Session: appSession(ctx),
			Title:    func(t string) { setTitle(ctx, t) },
			Navigate: ctx.Navigate,
		})
	}
	h.m.Open()
}

func (h *Home) Render() app.UI {
	m := h.m
	if m == nil {
		m = &model.Extensions{} // on the server: loading
	}
	var body app.UI
	switch {
	case m.Err != nil:
		body = statusView("error", problemText(m.Err))
	case !m.Loaded:
		body = statusView("loading", "Loading extensions…")
	case len(m.List) == 0:
		body = statusView("empty", "No extensions yet. Create one with `betaport extension create --team ID --name NAME`.")
	default:
		body = app.Ul().Class("cards").ID("extensions").Body(
			app.Range(m.List).Slice(func(i int) app.UI {
				e := m.List[i]
				return app.Li().Class("card").Body(
					app.A().Href(fmt.Sprintf("/extensions/%d", e.ID)).Class("card-link").Text(e.Name),
					app.P().Class("muted").Text(currentText(e)),
				)
			}),
		)
	}
	return shell("extensions",
		app.H1().Text("Extensions"),
		body,
	)
}

// currentNumber is the current bundle under a "Current bundle" label.
func currentNumber(e betaport.Extension) string {
	if e.CurrentBundle == 0 {
		return "None published yet"
	}
	return fmt.Sprintf("#%d", e.CurrentBundle)
}

func currentText(e betaport.Extension) string {
	if e.CurrentBundle == 0 {
		return "No bundle published yet"
	}
	return fmt.Sprintf("Current bundle #%d", e.CurrentBundle)
}

// downloadLink offers the bundle testers currently get, both ways: the
// signed CRX, which Chromium-based browsers keep up to date from its update
// URL, and the zip to load unpacked. The how-to follows.
func downloadLink(e betaport.Extension) app.UI {
	return app.Div().Class("get-build").Body(
		app.P().Class("get-links").Body(
			app.Span().Class("get-label").Text(fmt.Sprintf("Bundle #%d:", e.CurrentBundle)),
			bundleLinks(e.ID, e.CurrentBundle, nil),
		),
		installHelp(e.ID),
	)
}

// bundleLinks are the two downloads of one bundle. The zip keeps the
// class "download"; the CRX is "install".
func bundleLinks(extensionID, number int64, onDownload app.EventHandler) app.UI {
	install := app.A().Class("button install").Href(api.BundleCRXPath(extensionID, number)).
		Attr("download", "").Title("Signed package: Chrome, Edge, Brave and Opera update it on their own").
		Text("Install (.crx)")
	zip := app.A().Class("button download").Href(api.BundleDownloadPath(extensionID, number)).
		Attr("download", "").Title("The bundle's zip, to load unpacked (does not update itself)").
		Text("Zip (load unpacked)")
	if onDownload != nil {
		install, zip = install.OnClick(onDownload), zip.OnClick(onDownload)
	}
	return app.Span().Class("bundle-links").Body(install, zip)
}

// installHelp says, per browser, what to do with each download.
// installHelp says how to install a build of extension ext, and how to
// keep it across restarts with a policy file carrying the tester's own
// update URL.
func installHelp(ext int64) app.UI {
	return app.Details().Class("install-help").Body(
		app.Summary().Text("How to install"),
		app.P().Body(
			app.Strong().Text("Chrome, Edge, Brave, Opera"),
			app.Text(" (Chromium-based), with the .crx, which updates itself:"),
		),
		app.Ol().Body(
			app.Li().Text("Download “Install (.crx)”. If the browser says extensions cannot be added from this website, right-click the link and choose “Save link as…”."),
			app.Li().Body(
				app.Text("Open the extensions page ("),
				app.Code().Text("chrome://extensions"), app.Text(", "),
				app.Code().Text("edge://extensions"), app.Text(", "),
				app.Code().Text("brave://extensions"), app.Text(", "),
				app.Code().Text("opera://extensions"),
				app.Text(") and turn on Developer mode."),
			),
			app.Li().Text("Drag the .crx file onto that page and confirm."),
		),
		app.P().Class("muted").Text("On Windows and macOS, Chrome turns off an extension from outside the Chrome Web Store at its next restart unless a policy installs it (below); otherwise use the zip."),
		app.P().Body(
			app.Strong().Text("Keep it after a restart"),
			app.Text(": a policy file installs the extension from your own update URL, so it stays and updates itself."),
		),
		app.Ul().Class("policy-files").Body(
			app.Li().Body(
				app.A().Href(api.ExtensionPath(ext)+"/policy/linux").Attr("download", "").Text("Linux (.json)"),
				app.Text(": save it as "), app.Code().Text("/etc/opt/chrome/policies/managed/betaport.json"),
				app.Text(" (Chrome) or in "), app.Code().Text("/etc/chromium/policies/managed/"),
				app.Text(" (Chromium), with sudo, and restart the browser."),
			),
			app.Li().Body(
				app.A().Href(api.ExtensionPath(ext)+"/policy/macos").Attr("download", "").Text("macOS (.mobileconfig)"),
				app.Text(": open it, then install the profile in System Settings → Privacy & Security → Profiles. Chrome applies it only on a Mac enrolled in device management (MDM); on a personal Mac, use the zip."),
			),
			app.Li().Body(
				app.A().Href(api.ExtensionPath(ext)+"/policy/windows").Attr("download", "").Text("Windows (.reg)"),
				app.Text(": open it as an administrator and confirm, then restart Chrome. Chrome applies it only on a PC joined to a domain or managed by your organisation; on a personal PC, use the zip."),
			),
		),
		app.P().Body(
			app.Strong().Text("Zip (load unpacked)"),
			app.Text(": unzip it, turn on Developer mode on the extensions page, click “Load unpacked” and pick the folder that holds manifest.json. An unpacked copy does not update itself: repeat with each new build."),
		),
		app.P().Class("muted").Text("Firefox and Safari cannot install these packages."),
	)
}

// versionText is a bundle's served version, and the version its upload
// gave when the served one was derived from it.
func versionText(b betaport.Bundle) string {
	if u := uploadedAs(b); u != "" {
		return b.Version + " " + u
	}
	return b.Version
}

// uploadedAs is "(uploaded as …)" when the served version was derived from
// the uploaded one, else "".
func uploadedAs(b betaport.Bundle) string {
	if b.VersionName == "" || b.VersionName == b.Version {
		return ""
	}
	return "(uploaded as " + b.VersionName + ")"
}

// versionView shows versionText in a list row: the uploaded version on a
// second, smaller line, and the whole text as the cell's title. Its nodes
// are the same for every bundle (go-app matches children by position, and a
// row may be given another bundle as the list's window moves).
func versionView(b betaport.Bundle) app.UI {
	uploaded := uploadedAs(b)
	return app.Span().Class("version").Title(versionText(b)).Body(
		app.Span().Class("served-version").Text(b.Version),
		app.Text(" "),
		app.Small().Class("uploaded-as").Hidden(uploaded == "").Text(uploaded),
	)
}
