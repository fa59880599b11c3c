// Package web holds the static files served under /web/ and embeds them, so
// bin/betaport runs from any directory. app.wasm, its precompressed copies and
// wasm_exec.js are build outputs written here by make, never committed.
package web

import "embed"

// FS is every file of this folder, the generated ones included once built.
//
//go:embed *
var FS embed.FS
