package notes

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseBlocks(t *testing.T) {
	in := "Faster tabs.\nSecond line.\n\nChanges:\n- one\n* two\n  wrapped\n\n\n1. first\n2. second\n\n3. third\n- back to bullets\r\nlast\r\rend"
	got := Parse(in)
	want := []Block{
		{Kind: Paragraph, Items: []Text{{{Text: "Faster tabs.\nSecond line."}}}},
		{Kind: Paragraph, Items: []Text{{{Text: "Changes:"}}}},
		{Kind: Bullets, Items: []Text{{{Text: "one"}}, {{Text: "two\nwrapped"}}}},
		{Kind: Numbered, Start: 1, Items: []Text{{{Text: "first"}}, {{Text: "second"}}}},
		{Kind: Numbered, Start: 3, Items: []Text{{{Text: "third"}}}},
		{Kind: Bullets, Items: []Text{{{Text: "back to bullets\nlast"}}}},
		{Kind: Paragraph, Items: []Text{{{Text: "end"}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseNotItems(t *testing.T) {
	for _, in := range []string{"-no space", "*bold*", "1.5 times faster", "12) twelve", "-", "1.", "    - four spaces is text"} {
		got := Parse(in)
		if len(got) != 1 || got[0].Kind != Paragraph {
			t.Errorf("Parse(%q) = %+v, want one paragraph", in, got)
		}
	}
	if got := Parse(" \n\t\n"); len(got) != 0 {
		t.Errorf("blank notes = %+v, want no blocks", got)
	}
}

func TestInlineLinks(t *testing.T) {
	cases := []struct {
		in   string
		want Text
	}{
		{"see [the changelog](https://example.com/changes?a=1&b=2#x) now",
			Text{{Text: "see "}, {Text: "the changelog", URL: "https://example.com/changes?a=1&b=2#x"}, {Text: " now"}}},
		{"[http](http://example.com)", Text{{Text: "http", URL: "http://example.com"}}},
		{"[Go](https://en.wikipedia.org/wiki/Go_(language))",
			Text{{Text: "Go", URL: "https://en.wikipedia.org/wiki/Go_(language)"}}},
		{"[](https://example.com)", Text{{Text: "https://example.com", URL: "https://example.com"}}},
		// Nested brackets: the outer pair is no link, the inner is.
		{"[see [this](https://a.example)]", Text{{Text: "[see "}, {Text: "this", URL: "https://a.example"}, {Text: "]"}}},
		// Brackets in a link's text pair up and stay its text.
		{"[a [b] c](https://a.example)", Text{{Text: "a [b] c", URL: "https://a.example"}}},
		{"(see [x](https://a.example))", Text{{Text: "(see "}, {Text: "x", URL: "https://a.example"}, {Text: ")"}}},
		{"[a](https://a.example)[b](https://b.example)",
			Text{{Text: "a", URL: "https://a.example"}, {Text: "b", URL: "https://b.example"}}},
	}
	for _, c := range cases {
		if got := Inline(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Inline(%q)\n got %+v\nwant %+v", c.in, got, c.want)
		}
	}
}

// Hostile notes: nothing but http(s) links with a host is a link, and the
// rest comes back as the text it was, for the renderer to escape.
func TestInlineHostile(t *testing.T) {
	literal := []string{
		"[click](javascript:alert(1))",
		"[click](JavaScript:alert(1))",
		"[click]( javascript:alert(1))",
		"[x](data:text/html;base64,PHNjcmlwdD4=)",
		"[x](vbscript:msgbox)",
		"[x](/relative/path)",
		"[x](//example.com/no-scheme)",
		"[x](https:/one-slash)",
		"[x](https://user:pass@example.com)",
		"[x](https://example.com/a b)",
		"[x](https://example.com/\"onmouseover=\"alert(1))",
		"[x](https://example.com/<script>)",
		"[x](https://example.com",
		"[x] (https://example.com)",
		"[x\n](https://example.com)",
		"[unclosed(https://example.com)",
		"<script>alert(1)</script>",
		"<a href=\"javascript:alert(1)\">x</a>",
		"<img src=x onerror=alert(1)>",
		"&lt;b&gt; &amp; &#60;",
		"]]]][[[[()()",
	}
	for _, in := range literal {
		got := Inline(in)
		for _, s := range got {
			if s.URL != "" {
				t.Errorf("Inline(%q) made a link to %q", in, s.URL)
			}
		}
		if got.String() != in {
			t.Errorf("Inline(%q) reads %q, want the text unchanged", in, got.String())
		}
	}
	// Through Parse too: HTML is a paragraph of text.
	blocks := Parse("<script>alert(1)</script>\n\n- <b>bold</b>")
	if len(blocks) != 2 || blocks[0].Items[0].String() != "<script>alert(1)</script>" || blocks[1].Items[0].String() != "<b>bold</b>" {
		t.Fatalf("Parse of HTML = %+v", blocks)
	}
}

func TestParseInvalidUTF8AndControls(t *testing.T) {
	got := Parse("a\xffb\x00c")
	if len(got) != 1 || got[0].Items[0].String() != "a\uFFFDb\x00c" {
		t.Fatalf("Parse = %+v", got)
	}
}

// Huge and pathological notes parse in time linear in their length: a
// million '[' (or "[](" runs) would take minutes if each bracket scanned
// ahead.
func TestParseHugeInput(t *testing.T) {
	inputs := map[string]string{
		"open brackets":   strings.Repeat("[", 1<<20),
		"open parens":     "[x](" + strings.Repeat("(", 1<<20),
		"bracket parens":  strings.Repeat("[](", 1<<18),
		"many links":      strings.Repeat("[a](https://a.example) ", 1<<15),
		"many items":      strings.Repeat("- item\n", 1<<17),
		"many paragraphs": strings.Repeat("p\n\n", 1<<17),
		"one long line":   strings.Repeat("word ", 1<<18),
	}
	for name, in := range inputs {
		start := time.Now()
		blocks := Parse(in)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: %v", name, d)
		}
		n := 0
		for _, b := range blocks {
			for _, it := range b.Items {
				n += len(it.String())
			}
		}
		if n == 0 {
			t.Errorf("%s: no text came back", name)
		}
	}
	if got := Parse(strings.Repeat("[a](https://a.example) ", 1<<15)); len(got[0].Items[0]) != 2<<15-1 { // the last space is trimmed
		t.Errorf("many links: %d spans, want %d", len(got[0].Items[0]), 2<<15-1)
	}
}

func TestWebURL(t *testing.T) {
	for s, want := range map[string]bool{
		"https://example.com": true, "HTTP://EXAMPLE.COM/x": true, "http://127.0.0.1:8080/": true,
		"javascript:alert(1)": false, "https:": false, "https://": false, "ftp://example.com": false,
		"mailto:a@example.com": false, "https://a@example.com": false, "": false,
	} {
		if got := WebURL(s); got != want {
			t.Errorf("WebURL(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"- a\n1. b\n\n[x](https://a.example)", "[[]](", "<script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range Parse(s) {
			for _, it := range b.Items {
				for _, sp := range it {
					if sp.URL != "" && !WebURL(sp.URL) {
						t.Fatalf("link to %q", sp.URL)
					}
				}
			}
		}
	})
}
