package browserbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
)

// With BETAPORT_BENCH_PROFILE=DIR, Betaport's cold visits are recorded by
// V8's sampling profiler (every 50 µs), each written to DIR as a
// .cpuprofile (DevTools' Performance panel opens it) and summed up on
// stderr by where the time went. To see Go packages rather than
// wasm-function[N], build the wasm with its names (without -s) first:
//
//	GOOS=js GOARCH=wasm go build -trimpath -o web/app.wasm ./app/wasm
//	go run ./server/cmd/precompress -quality fast web/app.wasm
//
// (and `rm web/app.wasm; make wasm` after).
const profileEnv = "BETAPORT_BENCH_PROFILE"

func startProfile(ctx context.Context) error {
	if _, err := chromedp.Call(ctx, profiler.Enable, cdp.Empty{}); err != nil {
		return fmt.Errorf("enabling the profiler: %w", err)
	}
	if _, err := chromedp.Call(ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 50}); err != nil {
		return fmt.Errorf("setting the profiler's interval: %w", err)
	}
	if _, err := chromedp.Call(ctx, profiler.Start, cdp.Empty{}); err != nil {
		return fmt.Errorf("starting the profiler: %w", err)
	}
	return nil
}

// stopProfile stops the profiler, writes the profile as name in the
// profile directory, and prints where the time went.
func stopProfile(ctx context.Context, name string) error {
	res, err := chromedp.Call(ctx, profiler.Stop, cdp.Empty{})
	if err != nil || res.Profile == nil {
		return fmt.Errorf("stopping the profiler: %v", err)
	}
	p := res.Profile
	dir := os.Getenv(profileEnv)
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, name+".cpuprofile")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "browserbench: profile %s: %s\n", path, profileSummary(p))
	return nil
}

// profileSummary sums the samples' self time by group: a Go package for
// the wasm's functions, V8's own entries ((program), (garbage collector)),
// and "JS" for the page's scripts.
func profileSummary(p *profiler.Profile) string {
	var total int64
	for _, n := range p.Nodes {
		total += n.HitCount
	}
	if total == 0 {
		return "no samples"
	}
	groups := map[string]int64{}
	for _, n := range p.Nodes {
		if n.HitCount == 0 || n.CallFrame == nil {
			continue
		}
		groups[profileGroup(n.CallFrame.FunctionName, n.CallFrame.URL)] += n.HitCount
	}
	type g struct {
		name string
		hits int64
	}
	var gs []g
	for k, v := range groups {
		gs = append(gs, g{k, v})
	}
	slices.SortFunc(gs, func(a, b g) int { return int(b.hits - a.hits) })
	ms := func(hits int64) float64 { return float64(hits) / float64(total) * (p.EndTime - p.StartTime) / 1000 }
	var parts []string
	for i, x := range gs {
		if i == 20 || ms(x.hits) < 1 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f ms", x.name, ms(x.hits)))
	}
	return fmt.Sprintf("%.0f ms sampled: %s", (p.EndTime-p.StartTime)/1000, strings.Join(parts, ", "))
}

func profileGroup(fn, url string) string {
	switch {
	case strings.HasPrefix(fn, "(") || fn == "":
		if fn == "" {
			return "(anonymous JS)"
		}
		return fn
	case strings.HasPrefix(url, "wasm://") || strings.HasSuffix(url, ".wasm"):
		// V8 names a streamed module's functions by its URL (…/app.wasm),
		// others wasm://. Go's names there have the import path's slashes
		// as underscores: "github.com_x_y.__T_.M", "encoding_json.f",
		// "runtime.mallocgc"; a stripped build's "$wasm-function[123]".
		if m := goWasmPackage.FindStringSubmatch(strings.TrimPrefix(fn, "$")); m != nil {
			return "wasm " + m[1]
		}
		return "wasm (unnamed)"
	}
	return "JS " + filepath.Base(url)
}

// goWasmPackage takes the package from a Go function's wasm name: a host
// ("github.com_…") holds a dot of its own before the package's.
var goWasmPackage = regexp.MustCompile(`^([a-z0-9-]+\.[a-z]+_[^.]*|[^.\[]*)\.`)
