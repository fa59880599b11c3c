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

// UpdateXML returns the gupdate (protocol 2.0) response telling Chromium that
// extension appID is available at version from codebaseURL (the .crx URL).
func UpdateXML(appID, version, codebaseURL string) []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version='1.0' encoding='UTF-8'?>\n")
	b.WriteString("<gupdate xmlns='http://www.google.com/update2/response' protocol='2.0'>\n")
	b.WriteString("  <app appid='")
	xmlAttr(&b, appID)
	b.WriteString("'>\n    <updatecheck codebase='")
	xmlAttr(&b, codebaseURL)
	b.WriteString("' version='")
	xmlAttr(&b, version)
	b.WriteString("' />\n  </app>\n</gupdate>\n")
	return b.Bytes()
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
