// Package demo fills an empty service with demo data: enough teams,
// extensions, bundles and testers to scroll, on both plans.
package demo

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/screenshot"
)

// Size says how much to load.
type Size struct {
	// Per extension of the Professional team, in order: bundles and testers.
	Extensions []ExtensionSize
}

// ExtensionSize is the demo content of one extension.
type ExtensionSize struct {
	Name    string
	Bundles int
	Testers int
	// Reports is how many feedback reports its testers sent on its
	// latest builds, every fourth with a screenshot.
	Reports int
}

// Full is what `make run` loads: one extension long enough to show how lists
// behave at length, a smaller one, and an empty one.
var Full = Size{Extensions: []ExtensionSize{
	{Name: "Tab Tamer", Bundles: 500, Testers: 100_000, Reports: 60},
	{Name: "Reader Mode Plus", Bundles: 24, Testers: 300, Reports: 6},
	{Name: "Quiet Hours"},
}}

// Small is for tests: the same shape, quick to load.
var Small = Size{Extensions: []ExtensionSize{
	{Name: "Tab Tamer", Bundles: 120, Testers: 60},
	{Name: "Reader Mode Plus", Bundles: 3, Testers: 5},
	{Name: "Quiet Hours"},
}}

// Result is what was loaded, with the demo's sign-ins.
type Result struct {
	Teams      []*betaport.Team      `json:"teams"`
	Extensions []*betaport.Extension `json:"extensions"`
	Bundles    int                   `json:"bundles"`
	Testers    int                   `json:"testers"`
	Reports    int                   `json:"reports"`
	Admins     []Admin               `json:"admins"`
	// TesterLink is the path of one active tester's personal link.
	TesterLink string `json:"testerLink"`
}

// Admin is a demo admin and their password.
type Admin struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Team     string `json:"team"`
}

// SignIns is the text that tells a person how to try the demo.
func (r *Result) SignIns(baseURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Open %s and sign in:\n", baseURL)
	for _, a := range r.Admins {
		fmt.Fprintf(&b, "  admin of %s: %s / %s\n", a.Team, a.Email, a.Password)
	}
	fmt.Fprintf(&b, "  a tester of %s (their link signs in one browser, once, within 14 days): %s%s\n", r.Extensions[0].Name, baseURL, r.TesterLink)
	return b.String()
}

// Load loads demo data of the given size.
func Load(ctx context.Context, store betaport.Store, blobs *blob.Bucket, size Size) (*Result, error) {
	r := &Result{}
	pro := &betaport.Team{Name: "Acme Extensions", Plan: betaport.PlanProfessional, Seats: 5}
	starter := &betaport.Team{Name: "Hobby Tools", Plan: betaport.PlanStarter, Seats: 1}
	for _, t := range []*betaport.Team{pro, starter} {
		if err := store.CreateTeam(ctx, t); err != nil {
			return nil, err
		}
		r.Teams = append(r.Teams, t)
		admin := Admin{Email: "admin@" + strings.ToLower(strings.Fields(t.Name)[0]) + ".test", Password: credential.NewPassword(), Team: t.Name}
		if err := store.CreateUser(ctx, &betaport.User{TeamID: t.ID, Email: admin.Email}, credential.HashPassword(admin.Password)); err != nil {
			return nil, err
		}
		r.Admins = append(r.Admins, admin)
	}
	sizes := append(append([]ExtensionSize{}, size.Extensions...), ExtensionSize{Name: "Color Picker", Bundles: 3, Testers: 4})
	for i, es := range sizes {
		team := pro
		if i == len(sizes)-1 {
			team = starter
		}
		e := &betaport.Extension{TeamID: team.ID, Name: es.Name}
		if err := store.CreateExtension(ctx, e); err != nil {
			return nil, err
		}
		if err := loadBundles(ctx, store, blobs, e, es.Bundles); err != nil {
			return nil, err
		}
		if err := loadTesters(ctx, store, e, es.Testers); err != nil {
			return nil, err
		}
		if es.Bundles > 0 {
			e.CurrentBundle = int64(es.Bundles)
		}
		if err := loadReports(ctx, store, blobs, e, es.Reports); err != nil {
			return nil, fmt.Errorf("the demo's reports: %w", err)
		}
		if i == 0 {
			token := credential.NewToken()
			t := &betaport.Tester{ExtensionID: e.ID, Email: "tester@example.com", Name: "Demo Tester"}
			// The demo's link works once, as every invite link does: make
			// run prints it for the person trying the service.
			link := betaport.InviteLink{Hash: credential.HashToken(token), ExpiresAt: betaport.Now().Add(betaport.DefaultInviteExpiry)}
			if err := store.InviteTester(ctx, t, link, betaport.ActorCommandLine); err != nil {
				return nil, err
			}
			r.TesterLink = api.InvitePrefix + token
			r.Testers++
		}
		r.Extensions = append(r.Extensions, e)
		r.Bundles += es.Bundles
		r.Testers += es.Testers
		r.Reports += es.Reports
	}
	return r, nil
}

func loadBundles(ctx context.Context, store betaport.Store, blobs *blob.Bucket, e *betaport.Extension, n int) error {
	start := time.Now().Add(-time.Duration(n) * 20 * time.Hour)
	for i := 1; i <= n; i++ {
		version := fmt.Sprintf("1.%d.%d", i/10, i%10)
		zipBytes, files, err := Zip(e.Name, version)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(zipBytes)
		b := &betaport.Bundle{ExtensionID: e.ID,
			Name:            e.Name,
			Version:         version,
			ManifestVersion: 3,
			Size:            int64(len(zipBytes)),
			SHA256:          hex.EncodeToString(sum[:]),
			FileCount:       files,
			Source:          "demo",
			CreatedAt:       start.Add(time.Duration(i) * 20 * time.Hour).UTC().Truncate(time.Millisecond),
		}
		b.BlobKey = betaport.BundleKey(e.ID, b.SHA256)
		if err := blobs.WriteAll(ctx, b.BlobKey, zipBytes, &blob.WriterOptions{ContentType: "application/zip"}); err != nil {
			return err
		}
		if err := store.PublishBundle(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// The demo's testers are named from these lists: first × last names give
// 1,024 distinct names, and every e-mail address is distinct (it carries
// the tester's number).
var (
	firstNames = []string{"Ada", "Grace", "Linus", "Margaret", "Ken", "Barbara", "Dennis", "Frances", "Alan", "Radia", "Edsger", "Hedy", "Tim", "Katherine", "Donald", "Sophie",
		"Bjarne", "Guido", "Anita", "Leslie", "Shafi", "Niklaus", "Adele", "John", "Jean", "Fernando", "Evelyn", "Vint", "Mary", "Robert", "Lynn", "Yukihiro"}
	lastNames = []string{"Lovelace", "Hopper", "Torvalds", "Hamilton", "Thompson", "Liskov", "Ritchie", "Allen", "Turing", "Perlman", "Dijkstra", "Lamarr", "Berners-Lee", "Johnson", "Knuth", "Wilson",
		"Stroustrup", "van Rossum", "Borg", "Lamport", "Goldwasser", "Wirth", "Goldberg", "McCarthy", "Sammet", "Corbató", "Boyd", "Cerf", "Keller", "Kahn", "Conway", "Matsumoto"}
)

// emailWord spells a name as people put it in their e-mail address.
var emailWord = strings.NewReplacer(" ", "", "ó", "o")

// testersPerTx is how many demo testers go in one transaction: few
// transactions for a big load, none too big to hold in memory.
const testersPerTx = 50_000

func loadTesters(ctx context.Context, store betaport.Store, e *betaport.Extension, n int) error {
	return LoadTesters(ctx, store, e.ID, n)
}

// LoadTesters adds n demo testers to an extension, oldest first, with
// realistic names and distinct e-mail addresses: a mix of statuses, one a
// minute up to now. It goes through CreateTesters' multi-row INSERTs, so a
// million testers load in seconds, not minutes (the search benchmarks seed
// with it), and tidies the indexes after a big load.
func LoadTesters(ctx context.Context, store betaport.Store, extensionID int64, n int) error {
	start := time.Now().Add(-time.Duration(n) * time.Minute)
	for from := 0; from < n; from += testersPerTx {
		ts := make([]*betaport.Tester, 0, min(testersPerTx, n-from))
		for i := from; i < from+cap(ts); i++ {
			first, last := firstNames[i%len(firstNames)], lastNames[(i/len(firstNames))%len(lastNames)]
			status := betaport.TesterActive
			switch {
			case i%17 == 5:
				status = betaport.TesterInvited
			case i%29 == 7:
				status = betaport.TesterRevoked
			}
			ts = append(ts, &betaport.Tester{
				ExtensionID: extensionID,
				Email:       fmt.Sprintf("%s.%s.%d@example.com", first, emailWord.Replace(last), i+1),
				Name:        first + " " + last,
				Status:      status,
				CreatedAt:   start.Add(time.Duration(i) * time.Minute).UTC().Truncate(time.Millisecond),
			})
		}
		if err := store.CreateTesters(ctx, ts); err != nil {
			return err
		}
	}
	if n < optimizeAfter {
		return nil
	}
	return store.Optimize(ctx)
}

// reportTexts are what the demo's testers say, in turn.
var reportTexts = []string{
	"The popup opens blank after the update. Closing and opening it again shows the tabs.",
	"Grouping by site puts youtube.com and www.youtube.com in two groups.",
	"Love the new sort order! Could it remember my choice per window?",
	"Suspended tabs lose their scroll position when I come back to them.",
	"The badge count says 12 but I have 14 tabs open in this window.",
	"Keyboard shortcut Alt+Shift+T does nothing on this build (it worked on the last one).",
	"Dark mode: the search field's text is dark grey on black, hard to read.",
	"Closing duplicates also closed a pinned tab.",
}

// loadReports gives an extension n reports from its active testers on its
// last five builds, newest last: every fourth carries a screenshot, a few
// are seen or resolved by the command line, as an admin would have.
func loadReports(ctx context.Context, store betaport.Store, blobs *blob.Bucket, e *betaport.Extension, n int) error {
	if n == 0 {
		return nil
	}
	testers, err := store.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Status: betaport.TesterActive, Limit: 50})
	if err != nil {
		return err
	}
	if len(testers) == 0 || e.CurrentBundle == 0 {
		return fmt.Errorf("%s has no active tester or no build to report on", e.Name)
	}
	for i := range n {
		number := max(1, e.CurrentBundle-int64(4-i*5/n))
		b, err := store.FindBundle(ctx, e.ID, number)
		if err != nil {
			return err
		}
		f := &betaport.Feedback{ExtensionID: e.ID, TesterID: testers[i%len(testers)].ID, BundleNumber: number, Version: b.Version,
			Text: reportTexts[i%len(reportTexts)], Browser: "Chrome 131", OS: []string{"Windows", "macOS", "Linux"}[i%3],
			Source: []string{betaport.FeedbackFromBuildsPage, betaport.FeedbackFromExtension}[i%2]}
		if i%4 == 0 {
			img, err := screenshot.Take("image/png", bytes.NewReader(demoScreenshot(i)))
			if err != nil {
				return err
			}
			key := betaport.FeedbackKey(e.ID, fmt.Sprintf("demo%d", i), 1, img.Type)
			if err := blobs.WriteAll(ctx, key, img.Data, &blob.WriterOptions{ContentType: img.Type}); err != nil {
				return err
			}
			f.Screenshots = []betaport.Screenshot{{Number: 1, Type: img.Type, Width: img.Width, Height: img.Height, Size: int64(len(img.Data)), BlobKey: key}}
		}
		if err := store.CreateFeedback(ctx, f); err != nil {
			return err
		}
		status := ""
		switch {
		case i < n/3 && i%2 == 0:
			status = betaport.FeedbackResolved
		case i < n*2/3 && i%3 == 0:
			status = betaport.FeedbackSeen
		}
		if status != "" {
			if _, err := store.SetFeedbackStatus(ctx, e.ID, f.ID, status, betaport.ActorCommandLine); err != nil {
				return err
			}
		}
	}
	return nil
}

// demoScreenshot draws a browser window with the extension's popup open:
// a tab strip, a page, and the popup, in colours that vary with i.
func demoScreenshot(i int) []byte {
	const w, h = 800, 500
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill := func(r image.Rectangle, c color.RGBA) { draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src) }
	fill(img.Bounds(), color.RGBA{245, 246, 248, 255})
	fill(image.Rect(0, 0, w, 36), color.RGBA{222, 225, 230, 255})
	for t := range 5 {
		fill(image.Rect(8+t*120, 6, 120+t*120, 36), color.RGBA{uint8(200 + t*8), 230, 250, 255})
	}
	for l := range 9 {
		fill(image.Rect(60, 80+l*40, 60+300+(l*53+i*31)%300, 96+l*40), color.RGBA{190, 195, 205, 255})
	}
	hue := uint8(40 * (i % 6))
	fill(image.Rect(w-300, 44, w-16, 360), color.RGBA{255, 255, 255, 255})
	fill(image.Rect(w-300, 44, w-16, 84), color.RGBA{hue, 90, 200 - hue/2, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding to memory does not fail
	}
	return buf.Bytes()
}

// optimizeAfter is the load after which the store's indexes are tidied.
const optimizeAfter = 10_000

// Zip returns a small valid extension zip and its number of files.
func Zip(name, version string) ([]byte, int, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	files := []struct{ name, body string }{
		{"manifest.json", fmt.Sprintf(`{"manifest_version": 3, "name": %q, "version": %q, "background": {"service_worker": "background.js"}}`, name, version)},
		{"background.js", fmt.Sprintf("// %s %s\nchrome.runtime.onInstalled.addListener(() => console.log(%q));\n", name, version, version)},
	}
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			return nil, 0, err
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			return nil, 0, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), len(files), nil
}
