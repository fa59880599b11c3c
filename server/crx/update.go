package crx

import (
	"bytes"
	"encoding/xml"
	"net/url"
)

// UpdateCheck is one extension's entry in a Chromium update-check request.
type UpdateCheck struct {
	ID      string // extension ID
	Version string // currently installed version
}

// App statuses in an update response.
const (
	AppOK      = "ok"
	AppUnknown = "error-unknownApplication"
)

// App is one extension's answer in an update response.
type App struct {
	ID     string
	Status string // AppOK (or ""), or AppUnknown for an ID the feed does not serve
	// Version and Codebase offer the CRX of Version at Codebase; an empty
	// Version answers "no update".
	Version  string
	Codebase string
	// ProdVersionMin is the oldest browser version the update is for
	// (the manifest's minimum_chrome_version): an older browser does not
	// take it. "" for any.
	ProdVersionMin string
}

// UpdateResponse returns the gupdate (protocol 2.0) response Chromium's
// extension updater reads, with one app element per entry.
func UpdateResponse(apps ...App) []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version='1.0' encoding='UTF-8'?>\n")
	b.WriteString("<gupdate xmlns='http://www.google.com/update2/response' protocol='2.0'>\n")
	for _, a := range apps {
		status := a.Status
		if status == "" {
			status = AppOK
		}
		b.WriteString("  <app appid='")
		xmlAttr(&b, a.ID)
		b.WriteString("' status='")
		xmlAttr(&b, status)
		switch {
		case status != AppOK:
			b.WriteString("' />\n")
			continue
		case a.Version == "":
			b.WriteString("'>\n    <updatecheck status='noupdate' />\n")
		default:
			b.WriteString("'>\n    <updatecheck status='ok' codebase='")
			xmlAttr(&b, a.Codebase)
			b.WriteString("' version='")
			xmlAttr(&b, a.Version)
			if a.ProdVersionMin != "" {
				b.WriteString("' prodversionmin='")
				xmlAttr(&b, a.ProdVersionMin)
			}
			b.WriteString("' />\n")
		}
		b.WriteString("  </app>\n")
	}
	b.WriteString("</gupdate>\n")
	return b.Bytes()
}

// UpdateXML returns the update response offering extension appID at
// version from codebaseURL (the .crx URL).
func UpdateXML(appID, version, codebaseURL string) []byte {
	return UpdateResponse(App{ID: appID, Version: version, Codebase: codebaseURL})
}

func xmlAttr(b *bytes.Buffer, s string) {
	// EscapeText escapes ' " & < > and control whitespace.
	_ = xml.EscapeText(b, []byte(s))
}

// ParseUpdateCheck parses the query string of a Chromium extension update
// check, e.g. "x=id%3D<id>%26v%3D1.0.0%26installsource%3Dnotfromwebstore%26uc",
// with one x parameter per extension. Entries without an id are skipped;
// malformed query strings yield the entries that could be parsed.
func ParseUpdateCheck(rawQuery string) []UpdateCheck {
	q, _ := url.ParseQuery(rawQuery)
	var out []UpdateCheck
	for _, x := range q["x"] {
		inner, err := url.ParseQuery(x)
		if err != nil && len(inner) == 0 {
			continue
		}
		id := inner.Get("id")
		if id == "" {
			continue
		}
		out = append(out, UpdateCheck{ID: id, Version: inner.Get("v")})
	}
	return out
}
