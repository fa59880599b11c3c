package model

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/fetch"
)

// Limits of a screenshot, as the server takes them (package screenshot):
// the form says them before anything is sent.
const (
	ScreenshotMaxBytes = 5_000_000 // as the server's (server/screenshot.MaxBytes)
	ScreenshotTypes    = "image/png,image/jpeg,image/webp"
)

// Shot is a screenshot attached to a report not sent yet.
type Shot struct {
	// ID names it on the form (for its Remove).
	ID         int
	Name, Type string
	Size       int
	// Preview is the page's address of its bytes (an object URL), for
	// the thumbnail; Released is told when the shot goes.
	Preview string
	data    []byte
}

// ComposerConfig is what a tester's report form gives its model.
type ComposerConfig struct {
	Env
	Session *Session
	// Sent is told of each report kept (the page reads the tester's
	// reports again).
	Sent func(f *betaport.Feedback)
	// Release frees a shot's preview once it is removed or sent.
	Release func(preview string)
	// Navigate goes to an in-app page (a refused session).
	Navigate func(path string)
	// ClearText empties the text box once its report is sent.
	ClearText func()
}

// Composer is a tester's report form on their builds page: the text, the
// build (their current one unless they choose), and up to five screenshots
// pasted, dropped or picked. What the server would refuse is said before
// sending; nothing typed is lost by a refusal. Its fields and methods are
// for the UI goroutine.
type Composer struct {
	cfg ComposerConfig

	// ExtensionID is the extension the builds are of.
	ExtensionID int64
	Text        string
	// Bundle is the build chosen (0: the one the tester gets).
	Bundle int64
	Shots  []Shot
	// Sending is set while the report is on its way; Err is why the last
	// send or attachment was refused; Sent the last report kept.
	Sending bool
	Err     error
	Sent    *betaport.Feedback

	next int
}

// NewComposer returns an empty form.
func NewComposer(cfg ComposerConfig) *Composer { return &Composer{cfg: cfg} }

// problemf is a refusal said on the form before anything is sent.
func problemf(param, format string, args ...any) error {
	return &betaport.Error{Code: betaport.EINVALID, Param: param, Message: fmt.Sprintf(format, args...)}
}

// Attach adds a screenshot (pasted, dropped or picked): its name, its size
// and its bytes (the page reads at most ScreenshotMaxBytes+1 of a larger
// file), and its preview address. One that the server would refuse is
// refused here, saying why (its preview released).
func (c *Composer) Attach(name string, size int, data []byte, preview string) {
	c.Err = nil
	sniffed := http.DetectContentType(data)
	switch {
	case len(c.Shots) >= betaport.MaxFeedbackScreenshots:
		c.Err = problemf("screenshots", "A report carries at most %d screenshots. Remove one, or send this report and attach %s to another.",
			betaport.MaxFeedbackScreenshots, displayName(name))
	case !strings.Contains(ScreenshotTypes, sniffed) || sniffed == "":
		c.Err = problemf("screenshots", "%s is not a PNG, JPEG or WebP image. Attach a screenshot in one of those.", displayName(name))
	case max(size, len(data)) > ScreenshotMaxBytes:
		c.Err = problemf("screenshots", "%s is %.1f MB; a screenshot is at most 5 MB. Attach a smaller one (PNG or JPEG of the window, not the whole screen).",
			displayName(name), float64(max(size, len(data)))/(1<<20))
	}
	if c.Err != nil {
		c.release(preview)
		return
	}
	c.next++
	if name == "" {
		name = fmt.Sprintf("Pasted screenshot %d", c.next)
	}
	c.Shots = append(c.Shots, Shot{ID: c.next, Name: name, Type: sniffed, Size: len(data), Preview: preview, data: data})
	c.Sent = nil
}

func displayName(name string) string {
	if name == "" {
		return "The pasted image"
	}
	return name
}

// Remove takes a screenshot off the form.
func (c *Composer) Remove(id int) {
	for i, s := range c.Shots {
		if s.ID == id {
			c.release(s.Preview)
			c.Shots = append(c.Shots[:i:i], c.Shots[i+1:]...)
			return
		}
	}
}

func (c *Composer) release(preview string) {
	if preview != "" && c.cfg.Release != nil {
		c.cfg.Release(preview)
	}
}

// Send sends the report. It is refused before sending when it is empty or
// its text too long; while one is on its way, another Send does nothing.
func (c *Composer) Send() {
	if c.Sending {
		return
	}
	text := strings.TrimSpace(c.Text)
	switch {
	case text == "" && len(c.Shots) == 0:
		c.Err = problemf("text", "Say what happened, or attach a screenshot of it.")
		return
	case len(text) > betaport.MaxFeedbackText:
		c.Err = problemf("text", "The report is %d bytes; at most %d (10 KiB) are kept. Shorten it, or attach a screenshot.", len(text), betaport.MaxFeedbackText)
		return
	case !utf8.ValidString(text):
		c.Err = problemf("text", "A report is plain text.")
		return
	}
	r := client.Report{Text: text, Bundle: c.Bundle}
	for _, s := range c.Shots {
		r.Screenshots = append(r.Screenshots, client.Attachment{Name: s.Name, Type: s.Type, Data: s.data})
	}
	c.Sending, c.Err, c.Sent = true, nil, nil
	ext := c.ExtensionID
	Call(c.cfg.Env, func(ctx context.Context, cl *client.Client) (*betaport.Feedback, error) {
		return cl.SendFeedback(ctx, ext, r)
	}, func(f *betaport.Feedback, err error) {
		c.Sending = false
		if c.cfg.Session != nil {
			if to := c.cfg.Session.Refused(err); to != "" {
				if c.cfg.Navigate != nil {
					c.cfg.Navigate(to)
				}
				return
			}
		}
		if err != nil {
			c.Err = err // what was typed and attached stays
			return
		}
		c.Sent = f
		for _, s := range c.Shots {
			c.release(s.Preview)
		}
		c.Text, c.Shots = "", nil
		if c.cfg.ClearText != nil {
			c.cfg.ClearText()
		}
		if c.cfg.Sent != nil {
			c.cfg.Sent(f)
		}
	})
}

// MyReportsPageSize is the limit of one page of a tester's own reports.
const MyReportsPageSize = 20

// MyReports is a tester's own reports on their builds page, newest first,
// with their status: an infinite list (app/fetch) read again when the
// stream says reports moved. Its fields and methods are for the UI
// goroutine.
type MyReports struct {
	env  Env
	list *fetch.Infinite[FeedbackPage]
	stop func()
	// List is the list's last state.
	List fetch.InfiniteState[FeedbackPage]
	// Live decides what the stream's "feedback" events make it read.
	Live Live
}

// OpenMyReports reads the signed-in tester's reports on extension id;
// changed is told of each new state.
func OpenMyReports(env Env, cache *fetch.Cache, id int64, changed func()) *MyReports {
	m := &MyReports{env: env}
	m.Live = Live{
		Shows: func(rev api.Revision) bool {
			s := m.List
			return len(s.Data) > 0 && rev.Feedback <= s.Data[0].Revision
		},
		Settled:   func() bool { return !m.List.IsValidating && (m.List.Data != nil || m.List.Err != nil) },
		ReadAgain: m.ReadAgain,
	}
	getKey := fetch.CursorKeys[betaport.Feedback](api.FeedbackPath(id), nil, MyReportsPageSize)
	m.list, m.stop = openCursorList(env, cache, getKey, nil, 0, func(s fetch.InfiniteState[FeedbackPage]) {
		m.List = s
		m.Live.Landed()
		if changed != nil {
			changed()
		}
	})
	return m
}

// ReadAgain reads the held pages again (a report sent or moved).
func (m *MyReports) ReadAgain() {
	if m != nil && m.list != nil {
		m.list.Revalidate()
	}
}

// More reads the next page.
func (m *MyReports) More() {
	if m != nil && m.list != nil {
		m.list.SetSizeFunc(func(n int) int { return n + 1 })
	}
}

// Rows places the reports on rows.
func (m *MyReports) Rows() fetch.Rows[betaport.Feedback] { return fetch.RowsOf(m.List, FeedbackOf) }

// Close stops reading.
func (m *MyReports) Close() {
	if m != nil && m.stop != nil {
		m.stop()
		m.stop = nil
		m.list.Close()
	}
}
