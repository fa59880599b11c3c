package http

import (
	"bytes"
	"errors"
	"html"
	"slices"
	"strconv"
)

// escapeAttributes rewrites a page prerendered by go-app v9.8.0 so that
// every attribute value is HTML-escaped and no boolean attribute is
// written false.
//
// go-app writes attribute values with strconv.Quote: Go string quoting, in
// which a quote becomes \" — and HTML has no backslash escapes, so a value
// holding `"><meta http-equiv=refresh …>` (an extension's name, a search
// from a shared link) would close the attribute and open a tag of its own.
// Every value go-app writes is a Go-quoted string, so the page can be read
// back exactly: each value is unquoted and written again in HTML's terms.
// Text is already escaped by go-app; the contents of script and style
// elements are copied as they are.
func escapeAttributes(page []byte) ([]byte, error) {
	out := make([]byte, 0, len(page)+len(page)/16)
	for i := 0; i < len(page); {
		lt := bytes.IndexByte(page[i:], '<')
		if lt < 0 {
			out = append(out, page[i:]...)
			break
		}
		out = append(out, page[i:i+lt]...)
		i += lt
		if i+1 >= len(page) || !isLetter(page[i+1]) {
			out = append(out, page[i]) // "</x>", "<!DOCTYPE …>" or a stray "<"
			i++
			continue
		}
		name, next, err := copyStartTag(&out, page, i)
		if err != nil {
			return nil, err
		}
		i = next
		if name == "script" || name == "style" {
			end := indexFold(page[i:], "</"+name)
			if end < 0 {
				return nil, errors.New("escapeAttributes: unclosed " + name)
			}
			out = append(out, page[i:i+end]...)
			i += end
		}
	}
	return out, nil
}

// copyStartTag copies the start tag at page[i] ('<' then a letter) to out
// with its attribute values HTML-escaped, and returns the tag's lower-case
// name and the index after it.
//
// The attributes are written sorted by name: go-app writes them in map
// order, which changes from one render to the next, and a page rendered
// twice from the same data must be the same bytes (its ETag is their hash).
// go-app writes a value "true" as a bare name, as HTML's boolean
// attributes want; an ARIA state written bare would mean "undefined", so
// those get their ="true" back.
func copyStartTag(out *[]byte, page []byte, i int) (name string, next int, err error) {
	j := i + 1
	for j < len(page) && !isSpaceOrEnd(page[j]) {
		j++
	}
	name = string(bytes.ToLower(page[i+1 : j]))
	*out = append(*out, page[i:j]...)
	type attribute struct{ name, value []byte } // value nil: bare
	var attrs []attribute
	for j < len(page) {
		switch c := page[j]; {
		case c == '>':
			slices.SortStableFunc(attrs, func(a, b attribute) int { return bytes.Compare(a.name, b.name) })
			for _, a := range attrs {
				*out = append(*out, ' ')
				*out = append(*out, a.name...)
				if a.value != nil {
					*out = append(*out, `="`...)
					*out = append(*out, a.value...)
					*out = append(*out, '"')
				}
			}
			*out = append(*out, '>')
			return name, j + 1, nil
		case c == ' ' || c == '\n' || c == '\t' || c == '/':
			j++
		default: // an attribute name, then maybe ="…"
			k := j
			for k < len(page) && page[k] != '=' && !isSpaceOrEnd(page[k]) {
				k++
			}
			a := attribute{name: page[j:k]}
			j = k
			if j < len(page) && page[j] == '=' {
				quoted, err := strconv.QuotedPrefix(string(page[j+1:]))
				if err != nil || quoted[0] != '"' {
					return "", 0, errors.New("escapeAttributes: attribute value is not Go-quoted in <" + name + ">")
				}
				v, _ := strconv.Unquote(quoted)
				j += 1 + len(quoted)
				if v == "false" && booleanAttributes[string(bytes.ToLower(a.name))] {
					continue // present means true, whatever its value
				}
				a.value = []byte(html.EscapeString(v))
			} else if bytes.HasPrefix(bytes.ToLower(a.name), []byte("aria-")) {
				a.value = []byte("true")
			}
			attrs = append(attrs, a)
		}
	}
	return "", 0, errors.New("escapeAttributes: unclosed <" + name + ">")
}

// booleanAttributes are HTML's boolean attributes: true when present,
// whatever their value. go-app writes a false one as name="false", which a
// browser reads as true (a hidden "Load more", a disabled button, the last
// option selected), until the app takes over; escapeAttributes leaves them
// out.
var booleanAttributes = map[string]bool{
	"allowfullscreen": true, "async": true, "autofocus": true, "autoplay": true,
	"checked": true, "controls": true, "default": true, "defer": true,
	"disabled": true, "formnovalidate": true, "hidden": true, "inert": true,
	"ismap": true, "itemscope": true, "loop": true, "multiple": true,
	"muted": true, "nomodule": true, "novalidate": true, "open": true,
	"playsinline": true, "readonly": true, "required": true, "reversed": true,
	"selected": true,
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isSpaceOrEnd(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '>' || c == '/'
}

// indexFold is bytes.Index ignoring ASCII case.
func indexFold(s []byte, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if bytes.EqualFold(s[i:i+len(sub)], []byte(sub)) {
			return i
		}
	}
	return -1
}
