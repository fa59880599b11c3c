package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// Attachment is a screenshot to send with a report.
type Attachment struct {
	Name, Type string
	Data       []byte
}

// Report is a tester's report as sent: the build (0: the one they get) and
// the screenshots.
type Report struct {
	Text        string
	Bundle      int64
	Screenshots []Attachment
}

// SendFeedback sends a tester's report on one of an extension's builds.
func (c *Client) SendFeedback(ctx context.Context, extensionID int64, r Report) (*betaport.Feedback, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if r.Text != "" {
		mw.WriteField("text", r.Text)
	}
	if r.Bundle != 0 {
		mw.WriteField("bundle", strconv.FormatInt(r.Bundle, 10))
	}
	for _, a := range r.Screenshots {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="screenshots"; filename=%q`, a.Name))
		h.Set("Content-Type", a.Type)
		w, err := mw.CreatePart(h)
		if err != nil {
			return nil, err
		}
		w.Write(a.Data)
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+api.FeedbackPath(extensionID), &body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", mw.FormDataContentType())
	hc := c.HTTP
	if hc == nil {
		hc = fetch.DefaultClient
	}
	if hc == nil {
		return nil, errNoHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, ReadProblem(resp)
	}
	var f betaport.Feedback
	if err := json.NewDecoder(resp.Body).Decode(&f); err != nil {
		return nil, fmt.Errorf("reading the answer to the report: %w", err)
	}
	return &f, nil
}

// Feedback reads one report.
func (c *Client) Feedback(ctx context.Context, extensionID, id int64) (*betaport.Feedback, error) {
	var f betaport.Feedback
	if err := c.Do(ctx, http.MethodGet, api.FeedbackReportPath(extensionID, id), nil, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// SetFeedbackStatus moves a report to new, seen or resolved.
func (c *Client) SetFeedbackStatus(ctx context.Context, extensionID, id int64, status string) (*betaport.Feedback, error) {
	var f betaport.Feedback
	if err := c.Do(ctx, http.MethodPost, api.FeedbackReportPath(extensionID, id)+"/status", api.FeedbackStatus{Status: status}, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// DeleteFeedback deletes a report and its screenshots.
func (c *Client) DeleteFeedback(ctx context.Context, extensionID, id int64) error {
	return c.Do(ctx, http.MethodDelete, api.FeedbackReportPath(extensionID, id), nil, nil)
}
