// Package notes reads release notes: plain text with a small Markdown
// subset, parsed into blocks that a renderer turns into elements (the
// browser app's, in app/ui). It builds no HTML itself: the renderer's
// elements escape every piece of text, so HTML in notes shows as text.
//
// The subset:
//   - paragraphs, split by blank lines; a paragraph's line breaks are kept;
//   - list items: lines starting "- ", "* " (a bulleted list) or a number and
//     ". " ("1. ", a numbered list); a line under an item, not itself an
//     item, continues it;
//   - links: [text](http://…) or [text](https://…). A link to anything else
//     (javascript:, data:, a relative path), or one that is not written
//     whole, stays literal text.
//
// Everything else is text, as written. Parsing is linear in the length of
// the notes (a link's text and address are looked for within bounded
// lengths), so hostile input costs what ordinary input costs.
package notes

import (
	"net/url"
	"strings"
)

// Kind is what a block is.
type Kind int

const (
	Paragraph Kind = iota
	Bullets        // items starting "- " or "* "
	Numbered       // items starting "1. "
)

// Block is a paragraph or a list.
type Block struct {
	Kind Kind
	// Items are a list's items; a paragraph has one.
	Items []Text
	// Start is the number of a numbered list's first item.
	Start int
}

// Text is a run of inline spans.
type Text []Span

// Span is literal text, or a link when URL is set.
type Span struct {
	Text string
	URL  string // an absolute http or https URL
}

// String is the text as read, links as their text.
func (t Text) String() string {
	var b strings.Builder
	for _, s := range t {
		b.WriteString(s.Text)
	}
	return b.String()
}

// Bounds of a link: a longer text or address stays text.
const (
	maxLinkText = 1000
	maxLinkURL  = 2048
)

// Parse reads release notes into blocks. Invalid UTF-8 is replaced
// (U+FFFD); \r\n and \r are line breaks.
func Parse(notes string) []Block {
	notes = strings.ToValidUTF8(notes, "\uFFFD")
	notes = strings.ReplaceAll(notes, "\r\n", "\n")
	notes = strings.ReplaceAll(notes, "\r", "\n")

	var blocks []Block
	var cur *Block     // the block being read, nil after a blank line
	var lines []string // the lines of cur's last item or paragraph
	flush := func() {
		if cur == nil {
			return
		}
		cur.Items = append(cur.Items, Inline(strings.Join(lines, "\n")))
		lines = nil
	}
	end := func() {
		flush()
		if cur != nil {
			blocks = append(blocks, *cur)
			cur = nil
		}
	}
	for _, line := range strings.Split(notes, "\n") {
		if strings.TrimSpace(line) == "" {
			end()
			continue
		}
		kind, n, rest := item(line)
		switch {
		case kind == Paragraph && cur == nil:
			cur = &Block{Kind: Paragraph}
			lines = []string{strings.TrimRight(line, " \t")}
		case kind == Paragraph:
			// Under a paragraph, more of it; under an item, more of the item.
			lines = append(lines, strings.TrimSpace(line))
		case cur != nil && cur.Kind == kind:
			flush()
			lines = []string{rest}
		default: // a list starts, after a paragraph line or another kind of list
			end()
			cur = &Block{Kind: kind, Start: n}
			lines = []string{rest}
		}
	}
	end()
	return blocks
}

// item tells whether line is a list item: its kind, its number (numbered
// lists) and the text after the marker. Up to three spaces may come before
// the marker.
func item(line string) (Kind, int, string) {
	s := line
	for i := 0; i < 3 && strings.HasPrefix(s, " "); i++ {
		s = s[1:]
	}
	if len(s) >= 2 && (s[0] == '-' || s[0] == '*') && (s[1] == ' ' || s[1] == '\t') {
		return Bullets, 0, strings.TrimSpace(s[2:])
	}
	n, i := 0, 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	if i > 0 && i+1 < len(s) && s[i] == '.' && (s[i+1] == ' ' || s[i+1] == '\t') {
		return Numbered, n, strings.TrimSpace(s[i+2:])
	}
	return Paragraph, 0, ""
}

// Inline reads one paragraph's or item's text: literal text and links.
//
// Brackets and parentheses are paired once, up front (a stack each), so
// that each '[' is tried as a link in constant time: "[[[[…" or
// "[](((((…" cost what plain text costs.
func Inline(s string) Text {
	var out Text
	text := func(t string) {
		if t == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].URL == "" {
			out[n-1].Text += t
			return
		}
		out = append(out, Span{Text: t})
	}
	closeBracket, closeParen := pairs(s, '[', ']'), pairs(s, '(', ')')
	// nextBad[i] is the first byte at or after i that no address holds;
	// nextLine[i] the first newline.
	nextBad, nextLine := make([]int32, len(s)+1), make([]int32, len(s)+1)
	nextBad[len(s)], nextLine[len(s)] = int32(len(s)), int32(len(s))
	for i := len(s) - 1; i >= 0; i-- {
		nextBad[i], nextLine[i] = nextBad[i+1], nextLine[i+1]
		if !urlByte(s[i]) {
			nextBad[i] = int32(i)
		}
		if s[i] == '\n' {
			nextLine[i] = int32(i)
		}
	}
	from := 0 // the start of the text not yet taken
	for i := 0; i < len(s); i++ {
		if s[i] != '[' {
			continue
		}
		// [label](href): ] right before (, on one line, within bounds.
		c := int(closeBracket[i])
		if c < 0 || c+1 >= len(s) || s[c+1] != '(' || int(nextLine[i]) < c || c-i-1 > maxLinkText {
			continue
		}
		e := int(closeParen[c+1])
		if e < 0 || int(nextBad[c+2]) < e || e-c-2 > maxLinkURL {
			continue
		}
		label, href := s[i+1:c], s[c+2:e]
		if !WebURL(href) {
			continue // javascript:, data:, relative: the brackets stay text
		}
		if strings.TrimSpace(label) == "" {
			label = href
		}
		text(s[from:i])
		out = append(out, Span{Text: label, URL: href})
		from, i = e+1, e
	}
	text(s[from:])
	return out
}

// pairs returns, for each opening byte of s, the index of the closing one
// that pairs with it (nesting counted), or -1.
func pairs(s string, open, close byte) []int32 {
	match := make([]int32, len(s))
	var stack []int32
	for i := 0; i < len(s); i++ {
		match[i] = -1
		switch s[i] {
		case open:
			stack = append(stack, int32(i))
		case close:
			if n := len(stack); n > 0 {
				match[stack[n-1]] = int32(i)
				stack = stack[:n-1]
			}
		}
	}
	return match
}

// urlByte tells whether c may appear in a link's address as written: no
// spaces, controls, quotes or angle brackets (which no address needs
// unescaped, and which would close an attribute elsewhere).
func urlByte(c byte) bool {
	if c <= ' ' || c == 0x7f {
		return false
	}
	switch c {
	case '"', '\'', '<', '>', '\\', '`':
		return false
	}
	return true // non-ASCII (an IRI's) included
}

// WebURL tells whether s is an absolute http or https URL with a host: the
// only links notes make.
func WebURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return true
	}
	return false
}
