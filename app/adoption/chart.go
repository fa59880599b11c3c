package adoption

import (
	"strconv"
	"unicode/utf8"

	"github.com/betaport/betaport/app/betaport"
)

// The chart is a stacked bar per day, each version's share of the day's
// checks one segment, in SVG user units (the SVG scales to its box). It is
// readable without colour: every series has its own fill pattern, segments
// tall enough carry their version and percent on a white plate, every
// segment has a tooltip title, and the legend pairs each pattern with its
// version text.

// Patterns is how many fill patterns series cycle through; "other" always
// has the last one.
const Patterns = 6

// Geometry of the chart, in user units.
const (
	Width     = 640.0
	plotLeft  = 48.0
	plotRight = Width - 8
	plotTop   = 12.0
	plotH     = 200.0
	barW      = 64.0
	dayLabelY = plotTop + plotH + 18
	legendTop = dayLabelY + 16
	legendRow = 20.0
	// charW approximates the width of a character of the 11-unit labels.
	charW = 6.4
	// A segment shows its percent from this height, and its version too
	// from twice it.
	labelMinH = 15.0
)

// Chart is what app/ui draws.
type Chart struct {
	// Testers is set when the bars count testers, not checks.
	Testers       bool
	Width, Height float64
	Ticks         []Tick
	Bars          []Bar
	Legend        []LegendItem
}

// Tick is a grid line of the percent axis.
type Tick struct {
	Y     float64
	Label string
}

// Bar is one day.
type Bar struct {
	X, Width float64
	Day      string // "Nov 26"
	LabelX   float64
	Empty    bool // nothing counted that day
	Segments []Segment
}

// Segment is one version's share of a day, top to bottom in the order of
// Summary.Versions.
type Segment struct {
	Y, Height float64
	Pattern   int
	Version   string
	Checks    int64
	Percent   int
	// Title is the segment's tooltip and accessible text.
	Title string
	// Lines are the labels drawn on the segment (none when it is too
	// small), centred at LabelX, from LinesY, 12 units apart, on a white
	// plate Plate wide.
	Lines  []string
	LinesY float64
	Plate  float64
}

// LegendItem pairs a pattern with its version.
type LegendItem struct {
	X, Y    float64
	Pattern int
	Version string
}

// PatternOf is the pattern of the series at index i of versions.
func PatternOf(versions []string, i int) int {
	if versions[i] == betaport.OtherVersion {
		return Patterns - 1
	}
	return i % (Patterns - 1)
}

// Layout places s on the chart.
func Layout(s Summary) Chart {
	c := Chart{Width: Width, Testers: s.Testers}
	for _, p := range []int{100, 50, 0} {
		c.Ticks = append(c.Ticks, Tick{Y: plotTop + plotH*float64(100-p)/100, Label: strconv.Itoa(p) + "%"})
	}
	pattern := map[string]int{}
	for i, v := range s.Versions {
		pattern[v] = PatternOf(s.Versions, i)
	}
	slot := (plotRight - plotLeft) / float64(len(s.Days))
	for i, d := range s.Days {
		x := plotLeft + slot*float64(i) + (slot-barW)/2
		b := Bar{X: x, Width: barW, Day: d.Label(), LabelX: x + barW/2, Empty: d.Total == 0}
		y := plotTop
		var used int64
		for _, sh := range d.Shares {
			// Heights add up to the plot exactly: each segment ends where
			// the running total's share ends.
			used += sh.Checks
			end := plotTop + plotH*float64(used)/float64(d.Total)
			seg := Segment{Y: y, Height: end - y, Pattern: pattern[sh.Version], Version: sh.Version,
				Checks: sh.Checks, Percent: sh.Percent,
				Title: d.Label() + ": " + sh.Version + ", " + strconv.FormatInt(sh.Checks, 10) + s.Noun(sh.Checks) + " (" + strconv.Itoa(sh.Percent) + "%)"}
			pct := strconv.Itoa(sh.Percent) + "%"
			switch {
			case seg.Height >= 2*labelMinH:
				seg.Lines = []string{fit(sh.Version, barW-6), pct}
			case seg.Height >= labelMinH:
				seg.Lines = []string{pct}
			}
			if len(seg.Lines) > 0 {
				widest := 0
				for _, l := range seg.Lines {
					widest = max(widest, utf8.RuneCountInString(l))
				}
				seg.Plate = min(float64(widest)*charW+6, barW-2)
				seg.LinesY = seg.Y + seg.Height/2 - float64(len(seg.Lines)-1)*6
			}
			b.Segments = append(b.Segments, seg)
			y = end
		}
		c.Bars = append(c.Bars, b)
	}
	// The legend wraps onto as many rows as it needs.
	x, y := plotLeft, legendTop
	for i, v := range s.Versions {
		w := 22 + float64(utf8.RuneCountInString(v))*charW + 18
		if x+w > plotRight && x > plotLeft {
			x, y = plotLeft, y+legendRow
		}
		c.Legend = append(c.Legend, LegendItem{X: x, Y: y, Pattern: PatternOf(s.Versions, i), Version: v})
		x += w
	}
	c.Height = y + legendRow
	return c
}

// Noun is what n of the summary's counts are called, with a space before:
// " check", " testers".
func (s Summary) Noun(n int64) string {
	word := " check"
	if s.Testers {
		word = " tester"
	}
	if n != 1 {
		word += "s"
	}
	return word
}

// fit shortens s with an ellipsis to about width units.
func fit(s string, width float64) string {
	n := int(width / charW)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
