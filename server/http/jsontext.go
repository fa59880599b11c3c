package http

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// invalidText finds the first string of data, one valid JSON value, whose
// text is not Unicode: bytes that are not UTF-8, or a \u escape of half a
// UTF-16 surrogate pair without its other half ("a\ud800b"). encoding/json
// decodes both as U+FFFD, so a request would store text nobody sent
// (issue 29: release notes "a\ud800b" were published as "a\uFFFDb").
//
// where names the string: the field it is the value of, dotted for nested
// objects, [i] for an array's elements ("" for the body itself); inName
// says the field's name is the bad text, not its value.
func invalidText(data []byte) (where string, inName, found bool) {
	type level struct {
		array bool
		key   string // an object's field whose value comes next
		index int    // an array's element that comes next
		atKey bool   // an object's next string is a field's name
	}
	var stack []level
	path := func() string {
		var b strings.Builder
		for _, l := range stack {
			if l.array {
				b.WriteString("[" + strconv.Itoa(l.index) + "]")
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(l.key)
		}
		return b.String()
	}
	valueDone := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].atKey = true
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var prev int64
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false, false // the end (data is valid JSON)
		}
		// The token's text ends where the decoder stands now; what comes
		// before it since the last token is only spaces, ',' and ':'.
		raw := data[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, level{atKey: true})
			case '[':
				stack = append(stack, level{array: true})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			name := len(stack) > 0 && !stack[len(stack)-1].array && stack[len(stack)-1].atKey
			if !unicodeText(raw[bytes.IndexByte(raw, '"'):]) {
				if name {
					stack = stack[:len(stack)-1]
					return path(), true, true
				}
				return path(), false, true
			}
			if name {
				stack[len(stack)-1].key, stack[len(stack)-1].atKey = tok, false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// unicodeText reports whether a JSON string literal (quotes included,
// escapes well formed) holds Unicode text: UTF-8 bytes, and every
// surrogate escape one half of a pair, high then low.
func unicodeText(lit []byte) bool {
	if !utf8.Valid(lit) {
		return false
	}
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		if lit[i+1] != 'u' {
			i++ // \" \\ \/ \b \f \n \r \t
			continue
		}
		r := escapedRune(lit[i:])
		switch {
		case !utf16.IsSurrogate(r):
			i += 5
		case r < 0xdc00 && utf16.DecodeRune(r, escapedRune(lit[i+6:])) != utf8.RuneError:
			i += 11 // a high surrogate and its low one
		default:
			return false
		}
	}
	return true
}

// escapedRune is the code unit of the \uXXXX escape that b starts with,
// or -1 when b does not start with one.
func escapedRune(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	n, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}
