// Package browserbench compares Betaport's lists, in a real browser, with a
// reference page written with a mainstream framework (React 19 and SWR's
// useSWRInfinite) on the same API, data and origin, and prints the ratios.
// Its code is test files only; `make bench-browser` builds the reference
// page and runs it.
package browserbench
