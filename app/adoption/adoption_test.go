package adoption

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

var now = time.Date(2026, 11, 26, 13, 30, 0, 0, time.UTC)

func row(hoursAgo int, version string, checks int64) betaport.AdoptionCount {
	return betaport.AdoptionCount{Hour: now.Truncate(time.Hour).Add(-time.Duration(hoursAgo) * time.Hour), Version: version, Checks: checks}
}

func TestSummarize(t *testing.T) {
	rows := []betaport.AdoptionCount{
		row(0, "1.10.0", 6), row(0, "1.9.0", 2), row(0, "other", 1), // today, 13:00
		row(13, "1.9.0", 1),        // today, 00:00
		row(14, "1.9.0", 10),       // yesterday 23:00, within the last 24 hours
		row(24, "1.9.0", 5),        // yesterday 13:00: not within them
		row(6*24+13, "1.2.0", 4),   // six days ago, 00:00: the first day
		row(6*24+14, "0.1.0", 100), // seven days ago: not shown
		{Hour: now.Add(time.Hour), Version: "9.0.0", Checks: 1}, // a clock ahead
	}
	s := Summarize(rows, now, "1.10.0")
	if got := fmt.Sprint(s.Versions); got != "[1.10.0 1.9.0 1.2.0 other]" {
		t.Fatalf("versions %s: want newest first by number, other last", got)
	}
	if s.Days[0].Label() != "Nov 20" || s.Days[6].Label() != "Nov 26" || len(s.Days) != Days {
		t.Fatalf("days %s … %s", s.Days[0].Label(), s.Days[6].Label())
	}
	if s.Total != 6+2+1+1+10+5+4 {
		t.Fatalf("total %d", s.Total)
	}
	today := s.Days[6]
	if got := fmt.Sprint(today.Shares); today.Total != 10 || got != "[{1.10.0 6 60} {1.9.0 3 30} {other 1 10}]" {
		t.Fatalf("today: %d %s", today.Total, got)
	}
	if s.Last24 != 20 || s.OnCurrent != 6 || s.CurrentPercent() != 30 {
		t.Fatalf("last 24 hours: %d checks, %d on current, %d%%", s.Last24, s.OnCurrent, s.CurrentPercent())
	}
	table := s.Table()
	var lines []string
	for _, r := range table {
		lines = append(lines, fmt.Sprintf("%s %s %d %d", r.Day, r.Version, r.Checks, r.Percent))
	}
	want := "Nov 26 1.10.0 6 60|Nov 26 1.9.0 3 30|Nov 26 other 1 10|Nov 25 1.9.0 15 100|Nov 24  0 0|Nov 23  0 0|Nov 22  0 0|Nov 21  0 0|Nov 20 1.2.0 4 100"
	if got := strings.Join(lines, "|"); got != want {
		t.Fatalf("table:\n got %s\nwant %s", got, want)
	}
	if e := Summarize(nil, now, "1.0.0"); e.Total != 0 || len(e.Versions) != 0 || e.CurrentPercent() != 0 || len(e.Days) != Days {
		t.Fatalf("no rows: %+v", e)
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		part, whole int64
		want        int
	}{
		{0, 0, 0}, {0, 5, 0}, {5, 5, 100}, {1, 3, 33}, {2, 3, 67}, {999, 1000, 99}, {1, 1000, 1}, {1, 2, 50},
	} {
		if got := Percent(c.part, c.whole); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.part, c.whole, got, c.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	ordered := []string{"other", "0.9", "1.2.0", "1.9.0", "1.10.0", "1.10.0.1", "2"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := CompareVersions(ordered[i], ordered[j]); got != want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	if CompareVersions("1.0", "1.0.0") != -1 && CompareVersions("1.0", "1.0.0") != 1 {
		t.Error("equal numbers spelled differently must still order, or a sort is unstable")
	}
}

func TestLayout(t *testing.T) {
	s := Summarize([]betaport.AdoptionCount{
		row(0, "1.10.0", 7), row(0, "1.9.0", 2), row(0, "other", 1), row(24, "1.9.0", 3),
	}, now, "1.10.0")
	c := Layout(s)
	if len(c.Bars) != Days || c.Width != Width || c.Height <= legendTop {
		t.Fatalf("chart %v×%v with %d bars", c.Width, c.Height, len(c.Bars))
	}
	for i, b := range c.Bars {
		if b.X < plotLeft || b.X+b.Width > plotRight || (i > 0 && b.X <= c.Bars[i-1].X+c.Bars[i-1].Width) {
			t.Fatalf("bar %d at %v+%v overlaps or leaves the plot", i, b.X, b.Width)
		}
		if b.Empty != (len(b.Segments) == 0) {
			t.Fatalf("bar %d: empty %v with %d segments", i, b.Empty, len(b.Segments))
		}
		// Segments stack from the top of the plot to its bottom exactly.
		y := plotTop
		for _, seg := range b.Segments {
			if math.Abs(seg.Y-y) > 1e-9 || seg.Height <= 0 {
				t.Fatalf("bar %d: segment %+v does not start at %v", i, seg, y)
			}
			y += seg.Height
		}
		if len(b.Segments) > 0 && math.Abs(y-(plotTop+plotH)) > 1e-9 {
			t.Fatalf("bar %d ends at %v, want %v", i, y, plotTop+plotH)
		}
	}
	today := c.Bars[6].Segments
	if len(today) != 3 || today[0].Version != "1.10.0" || today[0].Percent != 70 ||
		fmt.Sprint(today[0].Lines) != "[1.10.0 70%]" || today[0].Title != "Nov 26: 1.10.0, 7 checks (70%)" {
		t.Fatalf("today's first segment: %+v", today[0])
	}
	// 10% of the plot's 200 units has room for the percent only.
	if fmt.Sprint(today[1].Lines) != "[1.9.0 20%]" || fmt.Sprint(today[2].Lines) != "[10%]" {
		t.Fatalf("small segments' labels: %q %q", today[1].Lines, today[2].Lines)
	}
	if today[2].Pattern != Patterns-1 || today[0].Pattern == today[1].Pattern {
		t.Fatalf("patterns %d %d %d: each series its own, other the last", today[0].Pattern, today[1].Pattern, today[2].Pattern)
	}
	// One pattern per version, the same on every day.
	if c.Bars[5].Segments[0].Version != "1.9.0" || c.Bars[5].Segments[0].Pattern != today[1].Pattern {
		t.Fatalf("yesterday's 1.9.0: %+v", c.Bars[5].Segments[0])
	}
	if len(c.Legend) != 3 || c.Legend[0].Version != "1.10.0" || c.Legend[2].Pattern != Patterns-1 {
		t.Fatalf("legend %+v", c.Legend)
	}
	if !c.Bars[0].Empty || c.Bars[0].Day != "Nov 20" {
		t.Fatalf("first bar %+v", c.Bars[0])
	}
}

// Many versions wrap the legend onto more rows, inside the chart.
func TestLegendWraps(t *testing.T) {
	var rows []betaport.AdoptionCount
	for i := range 12 {
		rows = append(rows, row(0, fmt.Sprintf("1.%d.1000", i), 1))
	}
	c := Layout(Summarize(rows, now, ""))
	last := c.Legend[len(c.Legend)-1]
	if last.Y == c.Legend[0].Y || c.Height < last.Y+legendRow/2 {
		t.Fatalf("legend not wrapped, or outside the chart: %+v, height %v", c.Legend, c.Height)
	}
	for _, it := range c.Legend {
		if it.X+22+float64(len(it.Version))*charW > plotRight+18 {
			t.Fatalf("legend item %+v runs off the chart", it)
		}
	}
	if got := fit("1.2.3.4.5.6.7.8.9.10", barW-6); !strings.HasSuffix(got, "…") || len([]rune(got)) != 9 {
		t.Fatalf("fit = %q", got)
	}
}
