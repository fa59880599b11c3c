// Package upload is the upload panel's work in plain Go, without go-app or
// syscall/js, so that `go test -race` runs it natively: the files a person
// drops are sorted into the key file and the zip and checked, then the
// submit flow (client.Submit) runs with its steps, progress, cancel and
// outcome. The panel (app/ui) renders a Runner's state and hands it the
// page's files and events.
package upload

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
)

// File is a file the person dropped or picked. In the browser its bytes
// stay in the page: Head and Text copy only what they return, and Put
// streams it to the upload URL.
type File interface {
	Name() string
	Type() string
	Size() int64
	// Head returns the first n bytes (fewer when the file is shorter).
	Head(ctx context.Context, n int) ([]byte, error)
	// Text returns the content of a small file.
	Text(ctx context.Context) ([]byte, error)
	client.Putter
}

// Phase is where an upload is.
type Phase int

const (
	Idle      Phase = iota // files are being chosen
	Running                // the three calls run
	Done                   // published
	Failed                 // a step failed; Problem says why
	Cancelled              // the person cancelled it
)

// Focus is where the person's focus moves after a change, for keyboard
// and screen reader users.
type Focus int

const (
	FocusCancel   Focus = iota + 1 // the cancel button
	FocusSteps                     // the step indicator
	FocusResult                    // the published bundle
	FocusRetry                     // the try again button
	FocusDropZone                  // the drop zone: other files are needed
	FocusNotes                     // the release notes: they must be shortened
)

// StepNames names the three steps, by client.Step.
var StepNames = [...]string{client.StepUploadURL: "Request an upload URL", client.StepPut: "Upload the zip", client.StepSign: "Publish"}

// Config is what a Runner needs from its page.
type Config struct {
	// Client makes the calls; Context ends the work in flight when the
	// panel goes (the component's context).
	Client  *client.Client
	Context context.Context
	// Dispatch runs f on the UI goroutine (go-app's ctx.Dispatch): the
	// runner's state is changed and read only there. Async runs f on a
	// goroutine of its own (go-app's ctx.Async).
	Dispatch func(f func())
	Async    func(f func())
	// Extension is the extension the panel uploads to, read when files
	// are taken (the panel may be given another).
	Extension func() (id int64, name string)
	// SignedIn reports whether an admin's session authorises the calls
	// (the panel in the signed-in app): a zip alone is then enough, and a
	// key file dropped with it is used instead. Nil means a key is needed.
	SignedIn func() bool
	// Focus moves the focus; Published is told each bundle published. Both
	// run on the UI goroutine; either may be nil.
	Focus     func(Focus)
	Published func(betaport.Bundle)
	// Size and Version write a size and a bundle's version for people,
	// ErrorText a request that got no answer; Now is the clock of the
	// upload speed. Nil takes plain defaults.
	Size      func(int64) string
	Version   func(betaport.Bundle) string
	ErrorText func(error) string
	Now       func() time.Time
}

// Runner is one upload panel's state and work. Its methods and fields are
// for the UI goroutine only.
type Runner struct {
	cfg Config

	// MaxSize is the largest zip the service takes, 0 until known.
	MaxSize int64
	// Key is the loaded key (kept in memory only), from the file KeyName.
	Key     *api.ServiceKey
	KeyName string
	// Zip is the chosen zip.
	Zip File
	// Sent is the zip the last run sent (kept once it fails, when Zip may
	// be gone): what its outcome is about.
	SentZip File
	// Notices say why the last files were refused, each with what to do.
	Notices []string
	// Notes are the release notes typed for the next bundle: sent with
	// call 1, cleared once a bundle is published with them.
	Notes string
	// Channel is the channel the next bundle goes to ("": the default
	// one); Rollout the share of its testers typed ("": all of them).
	Channel, Rollout string
	// sentChannel and sentPercent are where the last run's bundle went.
	sentChannel string
	sentPercent int

	Phase Phase
	Step  client.Step
	// Sent of Total bytes of the zip have gone.
	Sent, Total int64
	// Problem is why the upload failed; Bundle what it published.
	Problem *api.Problem
	Bundle  *betaport.Bundle
	// Warnings are what the service said of the bundle it published that
	// did not stop it (a manifest name that changed).
	Warnings []string
	// Announce is the latest text for the aria-live region.
	Announce string

	checking int // file checks in flight
	// notesRefused is set while Notices say the notes kept the upload
	// from starting.
	notesRefused bool
	samples      []progressSample
	putStart     time.Time
	putEnd       time.Time
	announced    int // the last progress quarter announced
	attempt      int
	cancel       context.CancelFunc
}

type progressSample struct {
	at   time.Time
	sent int64
}

// New returns a runner; call it on the UI goroutine.
func New(cfg Config) *Runner {
	if cfg.Size == nil {
		cfg.Size = func(n int64) string { return strconv.FormatInt(n, 10) + " B" }
	}
	if cfg.Version == nil {
		cfg.Version = func(b betaport.Bundle) string { return b.Version }
	}
	if cfg.ErrorText == nil {
		cfg.ErrorText = func(err error) string { return err.Error() }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	return &Runner{cfg: cfg}
}

// LoadLimits asks the service for the largest zip it takes, so that a zip
// too large is refused before any call. Without an answer the PUT says so.
func (r *Runner) LoadLimits() {
	c, ctx := r.cfg.Client, r.cfg.Context
	r.cfg.Async(func() {
		var limits api.SubmitLimits
		if err := c.Do(ctx, http.MethodGet, api.PathSubmitLimits, nil, &limits); err == nil {
			r.cfg.Dispatch(func() { r.MaxSize = limits.MaxSize })
		}
	})
}

// Close aborts an upload in flight and forgets the key and the zip.
func (r *Runner) Close() {
	if r.cancel != nil {
		r.cancel()
	}
	r.Key, r.Zip = nil, nil
}

// checked is the outcome of the checks of taken files.
type checked struct {
	key      *api.ServiceKey
	keyName  string
	zip      File
	problems []string
}

// Take sorts dropped or picked files into the key file and the zip, checks
// them, and starts the upload once both are there.
func (r *Runner) Take(files []File) {
	if len(files) == 0 {
		return
	}
	if r.Phase == Running {
		r.say("An upload is running. Cancel it before choosing other files.")
		return
	}
	r.Notices = nil
	var keys, zips []File
	for _, f := range files {
		if isKeyFileName(f) {
			keys = append(keys, f)
		} else {
			zips = append(zips, f)
		}
	}
	var pre []string
	if len(zips) > 1 {
		pre = append(pre, fmt.Sprintf("%d zips were dropped (%s). Drop one zip at a time.", len(zips), fileNames(zips)))
		zips = nil
	}
	if len(keys) > 1 {
		pre = append(pre, fmt.Sprintf("%d key files were dropped (%s). Drop only this extension's key.json.", len(keys), fileNames(keys)))
		keys = nil
	}
	if len(zips)+len(keys) == 0 {
		r.refuse(pre)
		return
	}
	r.checking++
	limit, ctx := r.MaxSize, r.cfg.Context
	extID, extName := r.cfg.Extension()
	r.cfg.Async(func() {
		res := checked{problems: pre}
		if len(keys) == 1 {
			k, err := r.checkKeyFile(ctx, keys[0], extID, extName)
			if err != nil {
				res.problems = append(res.problems, err.Error())
			} else {
				res.key, res.keyName = k, keys[0].Name()
			}
		}
		if len(zips) == 1 {
			if err := r.checkZip(ctx, zips[0], limit); err != nil {
				res.problems = append(res.problems, err.Error())
			} else {
				res.zip = zips[0]
			}
		}
		r.cfg.Dispatch(func() { r.checked(res) })
	})
}

func (r *Runner) checked(res checked) {
	r.checking--
	if res.key != nil {
		r.Key, r.KeyName = res.key, res.keyName
	}
	if res.zip != nil {
		r.Zip = res.zip
		if r.Phase != Running {
			r.Phase, r.Problem, r.Bundle = Idle, nil, nil
		}
	}
	if len(res.problems) > 0 {
		r.refuse(res.problems)
		return
	}
	switch {
	case r.key() != nil && r.Zip != nil && r.checking == 0 && r.Phase != Running:
		r.Start()
	case r.Zip != nil && r.key() == nil:
		r.say(r.Zip.Name() + " is ready. Now drop this extension's key file (key.json), or get one on the settings page.")
	case r.Key != nil && r.Zip == nil:
		_, name := r.cfg.Extension()
		r.say("The key for " + name + " is loaded. Now drop the extension's zip.")
	}
}

// key is what authorises the calls: the key file dropped, else the
// signed-in admin's session ({"extensionId": …} without an apiKey), else
// nothing yet.
func (r *Runner) key() *api.ServiceKey {
	if r.Key != nil {
		return r.Key
	}
	if r.cfg.SignedIn != nil && r.cfg.SignedIn() {
		id, _ := r.cfg.Extension()
		return &api.ServiceKey{ExtensionID: strconv.FormatInt(id, 10)}
	}
	return nil
}

func (r *Runner) refuse(problems []string) {
	r.Notices, r.notesRefused = problems, false
	r.say(strings.Join(problems, " "))
}

func isKeyFileName(f File) bool {
	return strings.HasSuffix(strings.ToLower(f.Name()), ".json") || f.Type() == "application/json"
}

func fileNames(files []File) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name()
	}
	return strings.Join(names, ", ")
}

// checkKeyFile reads and parses a key file and refuses another
// extension's key. Every error says what to do.
func (r *Runner) checkKeyFile(ctx context.Context, f File, extID int64, extName string) (*api.ServiceKey, error) {
	settings := "Download this extension's key file on its settings page."
	if f.Size() > api.MaxKeyFileSize {
		return nil, fmt.Errorf("%s is too large to be a key file. %s", f.Name(), settings)
	}
	text, err := f.Text(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s could not be read (%v). Drop it again.", f.Name(), err)
	}
	key, _, err := api.ParseKeyFile(text) // the bare service object is taken too
	if err != nil {
		return nil, fmt.Errorf("%s is %v", f.Name(), err)
	}
	if key.ExtensionID != strconv.FormatInt(extID, 10) {
		return nil, fmt.Errorf("%s is the key of extension #%s, not of %s (#%d). %s", f.Name(), key.ExtensionID, extName, extID, settings)
	}
	return &key, nil
}

// checkZip checks what can be checked before any request: not empty,
// within the announced limit, starting with a zip signature (only those
// first bytes are read; the rest stays where it is).
func (r *Runner) checkZip(ctx context.Context, f File, limit int64) error {
	if f.Size() == 0 {
		return fmt.Errorf("%s is empty. Drop the extension's .zip file.", f.Name())
	}
	if limit > 0 && f.Size() > limit {
		return fmt.Errorf("%s is %s; Betaport takes zips up to %s. Make the bundle smaller (leave out files the extension does not need), then drop it again.",
			f.Name(), r.cfg.Size(f.Size()), r.cfg.Size(limit))
	}
	head, err := f.Head(ctx, api.ZipHeadSize)
	if err != nil {
		return fmt.Errorf("%s could not be read (%v). Drop it again.", f.Name(), err)
	}
	if !api.IsZipStart(head) {
		return fmt.Errorf("%s is not a zip file (it does not start with a zip signature). Zip the extension's folder and drop the .zip file.", f.Name())
	}
	return nil
}
