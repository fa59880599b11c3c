package betaport

import "time"

// OtherVersion is the version a check is counted under when it reports a
// version the extension never served: an unpublished build, a typo, or a
// made-up query. Counting them apart would let anyone holding an update
// URL add rows at will.
const OtherVersion = "other"

// AdoptionCount is how many update checks of one extension reported one
// version within one UTC hour; or, counting testers (AdoptionByTesters),
// how many testers' own copies reported it at their last check of one UTC
// day. A row carries one count or the other. Nothing else of a check is
// kept.
type AdoptionCount struct {
	ExtensionID int64     `json:"-"`
	Hour        time.Time `json:"hour"` // the start of the hour (of the day, counting testers), UTC
	Version     string    `json:"version"`
	Checks      int64     `json:"checks,omitempty"`
	Testers     int64     `json:"testers,omitempty"`
}

// Count is the row's count, of checks or of testers.
func (c AdoptionCount) Count() int64 { return c.Checks + c.Testers }

// What the adoption list counts.
const (
	AdoptionByChecks  = "checks"
	AdoptionByTesters = "testers"
)

// AdoptionFilter selects a page of an extension's counts, newest hour
// first, then by version (byte order).
type AdoptionFilter struct {
	ExtensionID int64
	// Since is the first hour included.
	Since time.Time
	// After, when set, is the position of the last row of the previous
	// page: only rows after it in the list's order are read.
	After *AdoptionPosition
	Limit int
	// ByTesters counts testers per day rather than checks per hour.
	ByTesters bool
	// Channel, counting testers, keeps the testers now on that channel
	// ("": every tester).
	Channel string
}

// AdoptionPosition is a keyset position in the adoption list.
type AdoptionPosition struct {
	Hour    time.Time
	Version string
}
