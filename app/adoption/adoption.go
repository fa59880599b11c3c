// Package adoption works out what the extension page's Adoption section
// shows: from the hourly counts of update checks (GET …/adoption), each
// version's share of the checks per UTC day over the last week, the share
// of the last 24 hours on the current build, and the chart's geometry; or
// the same of the testers whose copies checked each day (GET
// …/adoption?count=testers, a row per day and version).
//
// It is plain Go (no go-app, no syscall/js), so `go test` covers it
// natively; app/ui turns a Chart into SVG elements.
package adoption

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// Days is how many UTC days the chart shows, today included.
const Days = 7

// Share is one version's checks (or testers) on one day.
type Share struct {
	Version string
	Checks  int64 // or testers, when the summary counts them
	Percent int   // of the day's checks, see Percent
}

// Day is one UTC day's checks by version.
type Day struct {
	Date   time.Time // 00:00 UTC
	Total  int64
	Shares []Share // the versions checked that day, in Summary.Versions order
}

// Label is how the chart and the table name a day, e.g. "Nov 26".
func (d Day) Label() string { return d.Date.Format("Jan 2") }

// Summary is the figures of the last Days days.
type Summary struct {
	Days []Day // oldest first
	// Versions is every version with checks in those days: newest first
	// (by version number), "other" last. A version keeps its place (its
	// pattern) across the days.
	Versions []string
	Total    int64
	// Current is the current bundle's version ("" before the first).
	Current string
	// Last24 is the checks of the last 24 hours (the hour under way and
	// the 23 before it); OnCurrent, those of them reporting Current.
	// Counting testers (by day), they are today's.
	Last24, OnCurrent int64
	// Testers is set when the counts are of testers, not checks.
	Testers bool
}

// Summarize adds up hourly counts of checks, or daily counts of testers
// (any order; counts outside the last Days days are left out) as of now.
func Summarize(rows []betaport.AdoptionCount, now time.Time, current string) Summary {
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	first := today.AddDate(0, 0, -(Days - 1))
	since24 := now.Truncate(time.Hour).Add(-23 * time.Hour)
	s := Summary{Current: current, Days: make([]Day, Days)}
	perDay := make([]map[string]int64, Days)
	for i := range s.Days {
		s.Days[i].Date = first.AddDate(0, 0, i)
		perDay[i] = map[string]int64{}
	}
	seen := map[string]bool{}
	for _, r := range rows {
		h, n := r.Hour.UTC(), r.Count()
		if n <= 0 || h.Before(first) || h.After(now) {
			continue
		}
		s.Testers = s.Testers || r.Testers > 0
		i := int(h.Sub(first) / (24 * time.Hour))
		if i >= Days {
			continue
		}
		perDay[i][r.Version] += n
		s.Days[i].Total += n
		s.Total += n
		if !seen[r.Version] {
			seen[r.Version] = true
			s.Versions = append(s.Versions, r.Version)
		}
		if !h.Before(since24) {
			s.Last24 += n
			if r.Version == current && current != "" {
				s.OnCurrent += n
			}
		}
	}
	slices.SortFunc(s.Versions, func(a, b string) int { return -CompareVersions(a, b) })
	for i := range s.Days {
		d := &s.Days[i]
		for _, v := range s.Versions {
			if n := perDay[i][v]; n > 0 {
				d.Shares = append(d.Shares, Share{Version: v, Checks: n, Percent: Percent(n, d.Total)})
			}
		}
	}
	return s
}

// CurrentPercent is the share of the last 24 hours' checks on the current
// build.
func (s Summary) CurrentPercent() int { return Percent(s.OnCurrent, s.Last24) }

// Percent is part's share of whole in whole percent, rounded, except that
// a part short of the whole never shows as 100% and a part above nothing
// never shows as 0%.
func Percent(part, whole int64) int {
	if whole <= 0 || part <= 0 {
		return 0
	}
	p := int(math.Round(float64(part) * 100 / float64(whole)))
	switch {
	case part < whole && p >= 100:
		return 99
	case p < 1:
		return 1
	}
	return min(p, 100)
}

// CompareVersions orders extension versions (dot-separated whole numbers,
// as manifests have them) by number; "other" sorts below every version,
// and what is not a number compares as text after the numbers.
func CompareVersions(a, b string) int {
	if a == b {
		return 0
	}
	if a == betaport.OtherVersion {
		return -1
	}
	if b == betaport.OtherVersion {
		return 1
	}
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		x, y := "0", "0"
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		nx, ex := strconv.ParseUint(x, 10, 64)
		ny, ey := strconv.ParseUint(y, 10, 64)
		switch {
		case ex == nil && ey == nil:
			if c := cmp.Compare(nx, ny); c != 0 {
				return c
			}
		case ex == nil:
			return 1
		case ey == nil:
			return -1
		default:
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	return strings.Compare(a, b)
}

// TableRow is one row of the section's table: a version's checks on a day,
// newest day first. A day without checks has one row, Version "".
type TableRow struct {
	Day     string
	Version string
	Checks  int64
	Percent int
}

// Table is the summary's rows, newest day first.
func (s Summary) Table() []TableRow {
	var rows []TableRow
	for i := len(s.Days) - 1; i >= 0; i-- {
		d := s.Days[i]
		if len(d.Shares) == 0 {
			rows = append(rows, TableRow{Day: d.Label()})
			continue
		}
		for _, sh := range d.Shares {
			rows = append(rows, TableRow{Day: d.Label(), Version: sh.Version, Checks: sh.Checks, Percent: sh.Percent})
		}
	}
	return rows
}
