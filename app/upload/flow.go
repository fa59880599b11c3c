package upload

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
)

// Start runs the three calls for the chosen zip and key, unless one of them
// is missing or an upload runs.
func (r *Runner) Start() {
	if r.key() == nil || r.Zip == nil || r.Phase == Running {
		return
	}
	percent, ok := r.RolloutPercent()
	if !ok {
		r.refuse([]string{"Nothing was uploaded. The share of testers is a whole percentage from 1 to 100; leave it empty for everyone on the channel. Then press Upload."})
		return
	}
	if msg := r.NotesProblem(); msg != "" {
		// Nothing is sent: the service would refuse them at call 1.
		r.refuse([]string{"Nothing was uploaded. " + msg + " Then press Upload."})
		r.notesRefused = true
		r.focus(FocusNotes)
		return
	}
	r.attempt++
	gen, key, zip, notes := r.attempt, *r.key(), r.Zip, r.Notes
	r.sentChannel, r.sentPercent = r.Channel, percent
	channel := r.Channel
	r.SentZip = zip
	runCtx, cancel := context.WithCancel(r.cfg.Context)
	r.cancel = cancel
	r.Phase, r.Step, r.Problem, r.Bundle, r.Warnings, r.Notices = Running, client.StepUploadURL, nil, nil, nil, nil
	r.Sent, r.Total, r.samples, r.announced = 0, zip.Size(), nil, 0
	r.say("Step 1 of 3: requesting an upload URL.")
	r.focus(FocusCancel)

	// update runs f on the UI goroutine unless a newer attempt started.
	update := func(f func()) {
		r.cfg.Dispatch(func() {
			if r.attempt == gen {
				f()
			}
		})
	}
	c := r.cfg.Client
	r.cfg.Async(func() {
		defer cancel()
		step := client.StepUploadURL // the step running; only this goroutine touches it
		out, err := c.Submit(runCtx, client.Submission{
			Key:          key,
			ReleaseNotes: notes,
			Channel:      channel,
			Rollout:      percent,
			Zip:          zip,
			Step: func(s client.Step, _ *api.UploadURL) error {
				step = s
				switch s {
				case client.StepPut:
					update(func() {
						r.Step = client.StepPut
						r.putStart, r.putEnd = r.cfg.Now(), time.Time{}
						r.samples = []progressSample{{at: r.putStart}}
						r.say("Step 2 of 3: uploading " + zip.Name() + ".")
					})
				case client.StepSign:
					update(func() {
						r.Step, r.cancel = client.StepSign, nil // publishing cannot be called back
						r.progress(zip.Size(), zip.Size())
						r.putEnd = r.cfg.Now()
						r.say("Step 3 of 3: publishing.")
						r.focus(FocusSteps)
					})
				}
				return nil
			},
			Progress: func(sent, total int64) {
				update(func() { r.progress(sent, total) })
			},
			Try: func(ctx context.Context, s client.Step, call func(context.Context) error) error {
				if s == client.StepSign {
					ctx = context.WithoutCancel(ctx) // the cancel button is gone by now
				}
				return call(ctx)
			},
		})
		switch {
		case err == nil:
			update(func() { r.published(out.Bundle, out.Warnings) })
		case step < client.StepSign && runCtx.Err() != nil:
			// Read here: the deferred cancel ends runCtx in every case.
			update(r.cancelled)
		default:
			update(func() { r.failed(err) })
		}
	})
}

func (r *Runner) progress(sent, total int64) {
	now := r.cfg.Now()
	r.Sent, r.Total = sent, total
	r.samples = append(r.samples, progressSample{now, sent})
	// Speed over the last three seconds.
	for len(r.samples) > 2 && now.Sub(r.samples[0].at) > 3*time.Second {
		r.samples = r.samples[1:]
	}
	if q := quarter(sent, total); q > r.announced && q < 4 {
		r.announced = q
		r.say(fmt.Sprintf("Uploading: %d%%.", q*25))
	}
}

func quarter(sent, total int64) int {
	if total <= 0 {
		return 0
	}
	return int(sent * 4 / total)
}

// Speed is bytes per second over the recent samples, or over the whole
// transfer once it is over; 0 while unknown.
func (r *Runner) Speed() float64 {
	if !r.putEnd.IsZero() {
		if d := r.putEnd.Sub(r.putStart).Seconds(); d > 0 {
			return float64(r.Total) / d
		}
		return 0
	}
	if len(r.samples) < 2 {
		return 0
	}
	first, last := r.samples[0], r.samples[len(r.samples)-1]
	dt := last.at.Sub(first.at).Seconds()
	if dt < 0.2 {
		return 0
	}
	return float64(last.sent-first.sent) / dt
}

func (r *Runner) published(b betaport.Bundle, warnings []string) {
	// The notes were this bundle's: the next zip starts without them.
	r.Phase, r.Bundle, r.Warnings, r.cancel, r.Zip, r.Notes = Done, &b, warnings, nil, nil, ""
	r.say(strings.TrimSpace(fmt.Sprintf("Published bundle #%d, version %s. %s ", b.Number, r.cfg.Version(b), r.reach()) + strings.Join(warnings, " ")))
	r.focus(FocusResult)
	if r.cfg.Published != nil {
		r.cfg.Published(b)
	}
}

func (r *Runner) failed(err error) {
	r.Phase, r.cancel = Failed, nil
	prob, ok := api.AsProblem(err)
	if !ok {
		prob = &api.Problem{Title: "The service cannot be reached", Detail: r.cfg.ErrorText(err)}
	}
	r.Problem = prob
	switch prob.Type {
	case api.ProblemInvalidKey:
		// This key will not work again: ask for the new one, which starts
		// the upload again by itself.
		r.Key, r.KeyName = nil, ""
	case api.ProblemInvalidZip, api.ProblemNotAZip, api.ProblemTooLarge:
		// The same zip would fail again: ask for a fixed one.
		r.Zip = nil
	}
	r.say(strings.TrimSpace(r.FailureTitle() + " " + r.FailureDetail()))
	if r.CanRetry() {
		r.focus(FocusRetry)
	} else {
		r.focus(FocusDropZone)
	}
}

// FailureTitle says, of a failed run, which zip failed and at which step
// ("tab-tamer.zip was not published: 2 problems to fix, listed below."):
// with several drops, the person knows which file it is about.
func (r *Runner) FailureTitle() string {
	name := "The zip"
	if r.SentZip != nil {
		name = r.SentZip.Name()
	}
	if r.Problem == nil {
		return ""
	}
	if n := len(r.Problem.Problems); n > 0 {
		return fmt.Sprintf("%s was not published: %d %s to fix, listed below.", name, n, plural(n, "problem", "problems"))
	}
	return fmt.Sprintf("%s was not published: step %d of 3 (%s) failed.", name, r.Step, StepNames[r.Step])
}

// FailureDetail is the service's own explanation of a failed run, unless
// the problems listed say it all (its detail then only points to them).
func (r *Runner) FailureDetail() string {
	if r.Problem == nil || len(r.Problem.Problems) > 0 {
		return ""
	}
	return r.Problem.Detail
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (r *Runner) cancelled() {
	r.Phase, r.cancel = Cancelled, nil
	r.say("Upload cancelled. Nothing was published.")
	r.focus(FocusRetry)
}

// RolloutPercent reads the share typed: 0 for everyone (nothing typed),
// or 1–100; false for anything else.
func (r *Runner) RolloutPercent() (int, bool) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(r.Rollout), "%"))
	if t == "" {
		return 0, true
	}
	n, err := strconv.Atoi(t)
	return n, err == nil && n >= 1 && n <= 100
}

// ReachedDefault reports whether the last run's bundle is what every
// tester on the default channel now gets (not another channel's, not a
// rollout).
func (r *Runner) ReachedDefault() bool {
	return (r.sentChannel == "" || r.sentChannel == betaport.DefaultChannel) && (r.sentPercent == 0 || r.sentPercent == 100)
}

// reach says who gets the bundle just published.
func (r *Runner) reach() string {
	channel := r.sentChannel
	if channel == "" {
		channel = betaport.DefaultChannel
	}
	if r.sentPercent != 0 && r.sentPercent != 100 {
		return fmt.Sprintf("It is rolling out to %d %% of %s's testers.", r.sentPercent, channel)
	}
	if channel == betaport.DefaultChannel {
		return "Testers get it now."
	}
	return "Testers on " + channel + " get it now."
}

// SetNotes takes the release notes as typed. Once they fit, the notice
// that refused them goes.
func (r *Runner) SetNotes(notes string) {
	r.Notes = notes
	if r.notesRefused && r.NotesProblem() == "" {
		r.Notices, r.notesRefused = nil, false
	}
}

// NotesProblem says what is wrong with the release notes typed, with what
// to do; "" when they can go.
func (r *Runner) NotesProblem() string {
	if len(r.Notes) > betaport.MaxReleaseNotes {
		return fmt.Sprintf("The release notes are %d bytes, %d over the limit of %d (10 KiB). Shorten them, or link to a longer changelog.",
			len(r.Notes), len(r.Notes)-betaport.MaxReleaseNotes, betaport.MaxReleaseNotes)
	}
	if err := betaport.ValidateReleaseNotes(r.Notes); err != nil {
		return betaport.ErrorMessage(err)
	}
	return ""
}

// CanRetry reports whether the same upload can be tried again.
func (r *Runner) CanRetry() bool {
	return r.key() != nil && r.Zip != nil && r.Phase != Running
}

// CanCancel reports whether the upload running can still be cancelled:
// until it publishes.
func (r *Runner) CanCancel() bool {
	return r.Phase == Running && r.Step < client.StepSign
}

// Cancel stops the upload, unless it is publishing.
func (r *Runner) Cancel() {
	if r.cancel != nil && r.Step < client.StepSign {
		r.cancel()
	}
}

// StepState is how step n shows: done, pending, failed, cancelled or active.
func (r *Runner) StepState(n client.Step) string {
	switch {
	case n < r.Step || r.Phase == Done:
		return "done"
	case n > r.Step:
		return "pending"
	case r.Phase == Failed:
		return "failed"
	case r.Phase == Cancelled:
		return "cancelled"
	default:
		return "active"
	}
}

// say puts text in the aria-live region.
func (r *Runner) say(text string) { r.Announce = text }

func (r *Runner) focus(f Focus) {
	if r.cfg.Focus != nil {
		r.cfg.Focus(f)
	}
}
