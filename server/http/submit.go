package http

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/metrics"
	"github.com/betaport/betaport/server/publish"
)

// The submit flow's three calls. Each handler decodes, calls one method of
// package publish, which owns the pipeline, and encodes its answer.

// submitKey reads the key object of calls 1 and 3 and authorises it. A body
// without an apiKey, {"extensionId": …}, is authorised by the session of an
// admin of that extension's team (the upload panel in the browser).
//
// keyID is the key's id when a key authorised the call (0 for a session):
// the call records it as used once it has succeeded (keyUsed).
func (s *Server) submitKey(w http.ResponseWriter, r *http.Request, who *subject, step string) (ext *betaport.Extension, keyID int64, ok bool) {
	return s.submitKeyWith(w, r, who, step, nil)
}

// submitKeyWith is submitKey for a call whose body carries more than the
// key object: take, when not nil, reads and removes those fields first.
func (s *Server) submitKeyWith(w http.ResponseWriter, r *http.Request, who *subject, step string, take func(map[string]json.RawMessage) error) (*betaport.Extension, int64, bool) {
	var raw map[string]json.RawMessage
	if !s.readJSON(w, r, &raw) {
		return nil, 0, false
	}
	var err error
	if take != nil {
		err = take(raw)
	}
	var ext *betaport.Extension
	var keyID int64
	if err == nil {
		ext, keyID, err = s.authorizeSubmit(r, raw, who)
	}
	if err != nil {
		if betaport.ErrorCode(err) == betaport.ERATELIMITED {
			s.Metrics.RateLimited(metrics.LimiterSubmit)
		}
		s.submitFailed(w, r, step, err)
		return nil, 0, false
	}
	return ext, keyID, true
}

// keyUsed records that the key keyID (0: none) made a call that
// succeeded. A refused call leaves the key's last use as it was, as it
// leaves everything else.
func (s *Server) keyUsed(r *http.Request, keyID int64) {
	if keyID == 0 {
		return
	}
	if err := s.Publish.KeyUsed(r.Context(), keyID); err != nil {
		// The call itself succeeded: its answer stands.
		s.Logger.WarnContext(r.Context(), "recording the key's last use", "err", err)
	}
}

// Steps of the submit flow, as the metrics name them.
const (
	stepUploadURL = metrics.StepUploadURL
	stepPut       = metrics.StepPut
	stepSign      = metrics.StepSign
)

// submitFailed answers a submit call's error and counts it by its problem
// type (internal for any other error).
func (s *Server) submitFailed(w http.ResponseWriter, r *http.Request, step string, err error) {
	s.Metrics.Submit(step, ProblemFor(err).Type)
	s.Error(w, r, err)
}

func (s *Server) authorizeSubmit(r *http.Request, raw map[string]json.RawMessage, who *subject) (*betaport.Extension, int64, error) {
	ctx := r.Context()
	if _, keyed := raw["apiKey"]; keyed || (who.user == nil && who.tester == nil) { // an access token is not a submit key
		key, err := api.ServiceKeyOf(raw)
		if err != nil {
			return nil, 0, err
		}
		return s.Publish.Authorize(ctx, key)
	}
	if who.tester != nil {
		return nil, 0, problem(http.StatusForbidden, api.ProblemForbidden,
			"Testers cannot publish. Sign in as an admin of the extension's team, or send a key file's service object.")
	}
	extID, err := api.SessionSubmitOf(raw)
	if err != nil {
		return nil, 0, err
	}
	id, ok := api.ParseID(extID)
	if !ok {
		return nil, 0, errNoExtension
	}
	ext, err := s.Store.FindExtension(ctx, id)
	if betaport.ErrorCode(err) == betaport.ENOTFOUND || (err == nil && ext.TeamID != who.user.TeamID) {
		return nil, 0, errNoExtension
	} else if err != nil {
		return nil, 0, err
	}
	ext, err = s.Publish.AuthorizeAdmin(ctx, ext.ID)
	return ext, 0, err
}

// handleSubmitUpload is call 1: issue an upload URL.
func (s *Server) handleSubmitUpload(w http.ResponseWriter, r *http.Request, who *subject) {
	var notes string
	var place betaport.Placement
	ext, keyID, ok := s.submitKeyWith(w, r, who, stepUploadURL, func(raw map[string]json.RawMessage) error {
		// Release notes, the channel and the rollout ride beside the key
		// object in call 1 only.
		text, present := raw["releaseNotes"]
		delete(raw, "releaseNotes")
		// Text that is not Unicode was refused by readJSON.
		if present && json.Unmarshal(text, &notes) != nil {
			p := problem(http.StatusBadRequest, api.ProblemInvalidNotes,
				`releaseNotes must be a JSON string of plain text, for example "Fixes the popup on small screens."`)
			p.Param = "releaseNotes"
			return p
		}
		if v, present := raw["channel"]; present {
			delete(raw, "channel")
			if json.Unmarshal(v, &place.Channel) != nil || place.Channel == "" {
				return &betaport.Error{Code: betaport.EINVALID, Param: "channel",
					Message: `channel must be the name of one of the extension's channels, like "beta".`}
			}
		}
		if v, present := raw["rollout"]; present {
			delete(raw, "rollout")
			if json.Unmarshal(v, &place.Percent) != nil || place.Percent < 1 || place.Percent > 100 {
				return &betaport.Error{Code: betaport.EINVALID, Param: "rollout",
					Message: "rollout must be a whole percentage from 1 to 100: the share of the channel's testers the bundle reaches first."}
			}
		}
		return nil
	})
	if !ok {
		return
	}
	if keyID != 0 {
		// A key bound to a channel publishes there: by default, and only.
		k, err := s.Store.FindKey(r.Context(), ext.ID, keyID)
		if err != nil {
			s.submitFailed(w, r, stepUploadURL, err)
			return
		}
		switch {
		case k.Channel == "":
		case place.Channel == "":
			place.Channel = k.Channel
		case place.Channel != k.Channel:
			s.submitFailed(w, r, stepUploadURL, &betaport.Error{Code: betaport.EFORBIDDEN, Param: "channel", Message: fmt.Sprintf(
				"The key %q publishes to %s only. Leave out \"channel\", or use a key for %s.", k.Label, k.Channel, place.Channel)})
			return
		}
	}
	u, err := s.Publish.RequestRelease(r.Context(), ext, notes, place)
	if err != nil {
		s.submitFailed(w, r, stepUploadURL, err)
		return
	}
	s.keyUsed(r, keyID)
	s.Metrics.Submit(stepUploadURL, "ok")
	writeJSON(w, r, http.StatusOK, u)
}

// handleUploadPut is call 2 on file storage: the zip is PUT to the URL
// call 1 gave out.
func (s *Server) handleUploadPut(w http.ResponseWriter, r *http.Request, _ *subject) {
	// An id spelled otherwise than the URL call 1 gave out names no
	// upload: 404 on any storage, before the signature is looked at.
	if _, ok := pathID(w, r, "upload"); !ok {
		return
	}
	start := time.Now()
	body := &countingBody{r: r.Body}
	err := s.Publish.Receive(r.Context(), publish.Put{
		UploadID:      r.PathValue("upload"),
		Path:          r.URL.Path,
		Query:         r.URL.Query(),
		ContentType:   r.Header.Get("Content-Type"),
		ContentLength: r.ContentLength,
		Body:          body,
	})
	switch {
	case err == nil:
		s.Metrics.Submit(stepPut, "ok")
		s.Metrics.Put(body.n, time.Since(start).Seconds())
		w.WriteHeader(http.StatusOK)
	case errors.Is(err, publish.ErrIncomplete) && isTimeout(err):
		s.Metrics.Submit(stepPut, api.ProblemRequestTimeout)
		t := s.Timeouts.withDefaults()
		writeProblem(w, problem(http.StatusRequestTimeout, api.ProblemRequestTimeout,
			fmt.Sprintf("The zip arrived slower than %d KiB/s, so the upload was stopped and nothing was kept. Send it again to the same URL, from a faster connection.", t.UploadMinRate>>10)))
	case errors.Is(err, publish.ErrIncomplete):
		s.Metrics.Submit(stepPut, api.ProblemBadRequest)
		s.Logger.WarnContext(r.Context(), "upload not stored", "err", err)
		writeProblem(w, problem(http.StatusBadRequest, api.ProblemBadRequest,
			"The upload did not complete, so nothing was kept. Send the zip again to the same URL."))
	default:
		s.submitFailed(w, r, stepPut, err)
	}
}

// countingBody counts the bytes of a PUT's body that were read.
type countingBody struct {
	r io.Reader
	n int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// uploadMethodNotAllowed answers any method but PUT on an upload URL.
func uploadMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPut)
	writeProblem(w, problem(http.StatusMethodNotAllowed, api.ProblemMethodNotAllowed, "Upload the zip with PUT, to the URL exactly as given."))
}

// handleSubmitSign is call 3: validate the latest upload's zip and publish it.
func (s *Server) handleSubmitSign(w http.ResponseWriter, r *http.Request, who *subject) {
	ext, keyID, ok := s.submitKey(w, r, who, stepSign)
	if !ok {
		return
	}
	start := time.Now()
	b, err := s.Publish.Sign(r.Context(), ext)
	if err != nil {
		s.submitFailed(w, r, stepSign, err)
		return
	}
	s.keyUsed(r, keyID)
	s.Metrics.Submit(stepSign, "ok")
	s.Metrics.Signed(time.Since(start).Seconds(), b.Size)
	writeJSON(w, r, http.StatusOK, api.Signed{Bundle: *b, Warnings: s.signWarnings(r, b)})
}

// signWarnings are what the submitter of b should know: a manifest name
// other than the bundle before it had (testers' browsers show the new name
// once they update; one upload of a test zip named "Extension" renames the
// extension for everyone). A retried sign answers the same.
func (s *Server) signWarnings(r *http.Request, b *betaport.Bundle) []string {
	if b.Number <= 1 {
		return nil
	}
	prev, err := s.Store.FindBundle(r.Context(), b.ExtensionID, b.Number-1)
	if err != nil || prev.Name == b.Name {
		return nil
	}
	return []string{fmt.Sprintf("manifest.json names this bundle %q, bundle #%d %q: once testers' browsers update, they show the new name. If that is not meant, publish again with the name %q.",
		b.Name, prev.Number, prev.Name, prev.Name)}
}

// handleSubmitLimits answers GET /api/submit/limits: what a client checks
// before it sends anything. It is public: the limit is no secret, and
// pipelines may check it too.
func (s *Server) handleSubmitLimits(w http.ResponseWriter, r *http.Request, _ *subject) {
	writeJSON(w, r, http.StatusOK, api.SubmitLimits{MaxSize: s.Publish.MaxUploadSize()})
}
