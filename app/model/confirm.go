package model

import "time"

// ConfirmDelay is how long a destructive question's Yes ("Yes, roll
// back", "Yes, revoke") takes no press after the question shows. The
// second click of a double-click on the asking button, or a held Enter
// key, comes within it (a double-click is two clicks within 500 ms by
// default on Windows, and close to it elsewhere); a person who reads the
// question does not. The Yes also shows away from the asking button, so a
// slower second click lands on neither.
const ConfirmDelay = 600 * time.Millisecond

// confirmReady reports whether a question shown at shown takes its Yes at
// now.
func confirmReady(shown, now time.Time) bool { return now.Sub(shown) >= ConfirmDelay }

// afterConfirmDelay has the page rendered again once a question shown now
// takes its Yes, which then shows as pressable.
func afterConfirmDelay(env Env) {
	if env.Dispatch == nil {
		return
	}
	env.clock().AfterFunc(ConfirmDelay, func() { env.Dispatch(func() {}) })
}
