package betaport

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Feedback statuses: a report is new until an admin has seen it, and
// resolved once they say it is dealt with.
const (
	FeedbackNew      = "new"
	FeedbackSeen     = "seen"
	FeedbackResolved = "resolved"
)

// Where a report came from.
const (
	FeedbackFromBuildsPage = "builds-page"
	FeedbackFromExtension  = "extension"
)

// Limits of one report.
const (
	// MaxFeedbackText is the most text a report may carry, in bytes.
	MaxFeedbackText = 10 << 10
	// MaxFeedbackScreenshots is how many screenshots a report may carry.
	MaxFeedbackScreenshots = 5
)

// Feedback is one tester's report on a build: what they wrote, the
// screenshots they attached, and what Betaport knew without asking (the
// build their copy ran, their browser and system).
type Feedback struct {
	ID          int64  `json:"id"`
	ExtensionID int64  `json:"extensionId"`
	TesterID    int64  `json:"testerId"`
	TesterEmail string `json:"testerEmail,omitempty"`
	// BundleNumber and Version are the build the report is on: the one
	// the tester named on their builds page, or the one their installed
	// copy runs (0 and "" when it is not known).
	BundleNumber int64  `json:"bundleNumber"`
	Version      string `json:"version"`
	Text         string `json:"text"`
	// Browser and OS are read from the request (its User-Agent).
	Browser     string       `json:"browser"`
	OS          string       `json:"os"`
	Source      string       `json:"source"`
	Status      string       `json:"status"`
	CreatedAt   time.Time    `json:"createdAt"`
	UpdatedAt   time.Time    `json:"updatedAt"`
	Screenshots []Screenshot `json:"screenshots"`
}

// Screenshot is one image of a report, as kept (decoded and encoded again:
// package screenshot).
type Screenshot struct {
	// Number is its place in the report, from 1.
	Number int    `json:"number"`
	Type   string `json:"type"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Size   int64  `json:"size"`
	// BlobKey is where its bytes are kept. Never sent.
	BlobKey string `json:"-"`
}

// FeedbackKey is where screenshot number n of a report of an extension is
// kept: under a random name the report is made with, as its screenshots
// are stored before the report is (a report never names a blob that is
// not there; a blob no report names is swept).
func FeedbackKey(extensionID int64, name string, n int, contentType string) string {
	ext := ".png"
	if contentType == "image/jpeg" {
		ext = ".jpg"
	}
	return fmt.Sprintf("feedback/%d/%s/%d%s", extensionID, name, n, ext)
}

// ValidFeedbackStatus reports whether s is a report's status.
func ValidFeedbackStatus(s string) bool {
	return s == FeedbackNew || s == FeedbackSeen || s == FeedbackResolved
}

// Validate reports what is wrong with a report about to be kept.
func (f *Feedback) Validate() error {
	f.Text = strings.TrimSpace(f.Text)
	switch {
	case f.Text == "" && len(f.Screenshots) == 0:
		return &Error{Code: EINVALID, Param: "text", Message: "Say what happened, or attach a screenshot of it."}
	case len(f.Text) > MaxFeedbackText:
		return &Error{Code: EINVALID, Param: "text", Message: fmt.Sprintf(
			"The report is %d bytes; at most %d (10 KiB) are kept. Shorten it, or attach a screenshot.", len(f.Text), MaxFeedbackText)}
	case !utf8.ValidString(f.Text):
		return &Error{Code: EINVALID, Param: "text", Message: "A report is UTF-8 text."}
	case len(f.Screenshots) > MaxFeedbackScreenshots:
		return &Error{Code: EINVALID, Param: "screenshots", Message: fmt.Sprintf(
			"A report carries at most %d screenshots; this one has %d.", MaxFeedbackScreenshots, len(f.Screenshots))}
	case f.ExtensionID <= 0 || f.TesterID <= 0:
		return Errorf(EINVALID, "A report is a tester's, on an extension.")
	case f.Source != FeedbackFromBuildsPage && f.Source != FeedbackFromExtension:
		return Errorf(EINVALID, "A report comes from the builds page or from the extension.")
	}
	for _, r := range f.Text {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return &Error{Code: EINVALID, Param: "text", Message: fmt.Sprintf(
				"A report is plain text: it holds a control character (U+%04X).", r)}
		}
	}
	for i, sc := range f.Screenshots {
		if sc.BlobKey == "" || sc.Number != i+1 {
			return Errorf(EINVALID, "A report's screenshots are numbered from 1 and stored before it.")
		}
	}
	for _, v := range []*string{&f.Browser, &f.OS, &f.Version} {
		if len(*v) > 200 || !utf8.ValidString(*v) || strings.ContainsFunc(*v, unicode.IsControl) {
			*v = "" // what the request said of itself is not worth a refusal
		}
	}
	return nil
}

// FeedbackFilter narrows FindFeedback. Zero fields match everything.
type FeedbackFilter struct {
	ExtensionID  int64
	TesterID     int64
	BundleNumber int64
	Status       string // one status; FeedbackOpen for new and seen
	Query        string // part of the text or the tester's e-mail
	BeforeID     int64  // keyset: only reports with a smaller id (0: from the newest)
	Limit        int
}

// Audit actions of reports: the status a report was moved to.
const (
	AuditFeedbackNew      = "feedback.new"
	AuditFeedbackSeen     = "feedback.seen"
	AuditFeedbackResolved = "feedback.resolved"
	AuditFeedbackDeleted  = "feedback.deleted"
)

// FeedbackOpen is the filter of the reports not resolved.
const FeedbackOpen = "open"

// FeedbackStore keeps testers' reports and their screenshots' records (the
// bytes are in blob storage, under FeedbackKey).
type FeedbackStore interface {
	// CreateFeedback keeps f, numbered (f.ID) and dated, new, with its
	// screenshots' records (their bytes stored already, at their keys).
	CreateFeedback(ctx context.Context, f *Feedback) error
	// FindFeedback returns one report of an extension.
	FindFeedback(ctx context.Context, extensionID, id int64) (*Feedback, error)
	// FindFeedbackList returns a page of reports, newest first.
	FindFeedbackList(ctx context.Context, f FeedbackFilter) ([]*Feedback, error)
	// SetFeedbackStatus moves a report to status and records actor in the
	// audit trail; the same status again changes nothing.
	SetFeedbackStatus(ctx context.Context, extensionID, id int64, status, actor string) (*Feedback, error)
	// OpenFeedbackCounts counts the reports not resolved of each of the
	// bundles.
	OpenFeedbackCounts(ctx context.Context, extensionID int64, numbers []int64) (map[int64]int64, error)
	// DeleteFeedback deletes a report and its screenshots' records, and
	// records actor in the audit trail; it returns the report as it was
	// (its screenshots' bytes are the caller's to delete).
	DeleteFeedback(ctx context.Context, extensionID, id int64, actor string) (*Feedback, error)
}
