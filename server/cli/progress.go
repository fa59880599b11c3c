package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress reports an upload's bytes on stderr: a bar redrawn in place on a
// terminal, a few plain lines otherwise (CI logs), nothing when quiet.
//
// The transport reads the body on its own goroutine, so add may run while
// the submitting goroutine waits; finish closes the bar under the same lock,
// after which nothing more is written.
type progress struct {
	mu     sync.Mutex
	w      io.Writer // nil: quiet
	tty    bool
	total  int64
	sent   int64
	start  time.Time
	last   time.Time // last render
	bucket int64     // last tenth of the total printed (plain lines)
	done   bool
	now    func() time.Time
}

// Render intervals: the bar at most every 100 ms, plain lines at most every
// 10 % and 2 s.
const (
	barEvery   = 100 * time.Millisecond
	plainEvery = 2 * time.Second
	barWidth   = 24
)

func newProgress(w io.Writer, tty bool, total int64, now func() time.Time) *progress {
	p := &progress{w: w, tty: tty, total: total, now: now}
	p.start = now()
	p.last = p.start
	if w != nil && !tty {
		fmt.Fprintf(w, "uploading %s…\n", formatBytes(total))
	}
	return p
}

// add counts n more bytes sent.
func (p *progress) add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.sent += int64(n)
	if p.w == nil {
		return
	}
	now := p.now()
	if p.tty {
		if now.Sub(p.last) >= barEvery {
			p.last = now
			p.drawBar(now)
		}
		return
	}
	if b := p.percent() / 10; b > p.bucket && now.Sub(p.last) >= plainEvery && p.sent < p.total {
		p.bucket, p.last = b, now
		fmt.Fprintf(p.w, "uploading %s… %d%%\n", formatBytes(p.total), p.percent())
	}
}

// finish ends the report: ok says whether the server took the bytes.
func (p *progress) finish(ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if p.w == nil {
		return
	}
	now := p.now()
	if p.tty {
		p.drawBar(now)
		fmt.Fprintln(p.w)
		return
	}
	if ok {
		elapsed := now.Sub(p.start)
		shown := elapsed.Round(100 * time.Millisecond)
		if elapsed < time.Second {
			shown = elapsed.Round(time.Millisecond)
		}
		fmt.Fprintf(p.w, "uploaded %s in %s%s\n", formatBytes(p.total), shown, speed(p.total, elapsed))
	}
}

func (p *progress) percent() int64 {
	if p.total <= 0 {
		return 100
	}
	return min(p.sent*100/p.total, 100)
}

func (p *progress) drawBar(now time.Time) {
	filled := int(p.percent() * barWidth / 100)
	bar := strings.Repeat("#", filled) + strings.Repeat("-", barWidth-filled)
	fmt.Fprintf(p.w, "\r\x1b[K[%s] %3d%%  %s / %s%s", bar, p.percent(),
		formatBytes(p.sent), formatBytes(p.total), speed(p.sent, now.Sub(p.start)))
}

// speed is ", 3.1 MiB/s" (or "" before there is anything to measure).
func speed(n int64, d time.Duration) string {
	if n <= 0 || d < 50*time.Millisecond {
		return ""
	}
	return fmt.Sprintf("  %s/s", formatBytes(int64(float64(n)/d.Seconds())))
}

// formatBytes is n in binary units: 512 B, 3.4 KiB, 12.0 MiB.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// isTerminal reports whether w is a terminal (a character device), without
// golang.org/x/term. TERM=dumb asks for plain lines.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
