# Betaport. `make run` serves the demo; `make test` runs every check.
SHELL := /bin/bash
GO    ?= go
GOROOT_DIR := $(shell $(GO) env GOROOT)
# Every go command builds with -trimpath: a package's build is then cached by
# its content, not by the folder it was checked out in, so a clean clone of
# code built before (CI's checkout) compiles nothing again; without it every
# package of this module was compiled anew in each clone, in each of its
# builds (race, plain, vet, wasm): compiling and vetting them again was about a
# quarter of make test's CPU. The tests run
# every time all the same (-count=1): a result is never taken from the cache.
export GOFLAGS := -trimpath $(GOFLAGS)
PKG   := github.com/betaport/betaport
# Go sources of the browser app (everything app.wasm is built from).
APP_SOURCES    := $(shell find app -name '*.go' -not -name '*_test.go') go.mod go.sum
SERVER_SOURCES := $(shell find server web -name '*.go' -not -name '*_test.go') $(wildcard web/*.css web/*.svg web/*.png web/*.txt) server/sqldb/migrations
# The build id names one build of the browser app: a hash of app.wasm, so
# every replica of one build agrees and a new build updates browsers.
BUILD_ID = $(shell sha256sum web/app.wasm | cut -c1-12)

.PHONY: FORCE all build dist wasm run test vet lint test-packages test-cli test-dist test-browser test-race test-wasm axe chromium scaleout-deps versitygw postgresql bench fuzz clean help

all: build

help:
	@echo "make run    build, load demo data on first run, serve at http://127.0.0.1:8080"
	@echo "make test   vet, race tests, the wasm build and tests, browser tests"
	@echo "make build  bin/betaport, self-contained"
	@echo "make dist   betaport for linux, darwin, windows (amd64, arm64) in dist/, with SHA256SUMS"
	@echo "make bench  benchmarks, as ratios measured side by side"
	@echo "make fuzz   every fuzz target for FUZZTIME each (default 30s); make test runs their seeds"
	@echo "make clean  remove build outputs (keeps ./data)"

## The browser app: app.wasm, its precompressed copies and the matching wasm_exec.js.
wasm: web/app.wasm web/app.wasm.br web/app.wasm.gz web/wasm_exec.js

web/app.wasm: $(APP_SOURCES)
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags='-s -w' -o $@ ./app/wasm

# PRECOMPRESS is the brotli quality of app.wasm.br: best for what ships,
# fast for make test (40 s less before the tests start; no test measures
# the bytes). A stamp outside web/ (everything in web/ is embedded) records
# the quality the copies have, so changing it compresses them again.
PRECOMPRESS ?= best
web/app.wasm.br web/app.wasm.gz &: web/app.wasm .cache/precompress-quality
	$(GO) run ./server/cmd/precompress -quality $(PRECOMPRESS) web/app.wasm

.cache/precompress-quality: FORCE
	@mkdir -p .cache
	@[ "$$(cat $@ 2>/dev/null)" = "$(PRECOMPRESS)" ] || echo "$(PRECOMPRESS)" > $@

FORCE:

web/wasm_exec.js: $(GOROOT_DIR)/lib/wasm/wasm_exec.js
	cp $< $@

## The server, with web assets and the wasm embedded.
build: bin/betaport

bin/betaport: wasm $(SERVER_SOURCES)
	$(GO) build -trimpath -ldflags='-s -w -X $(PKG)/server/http.Version=$(BUILD_ID) -X $(PKG)/server/cli.Release=$(RELEASE)' -o $@ ./server/cmd/betaport

# RELEASE is the tag of the commit checked out (v1.2.0), if it has one:
# --version prints it, and make dist names the archives by it; without one,
# both use the version Go stamps from the checkout.
RELEASE ?= $(shell git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null)

## Release archives: betaport for linux, darwin and windows on amd64 and
## arm64 (.tar.gz, .zip for windows), each with the README, and SHA256SUMS,
## in $(DIST). server/cmd/dist says how; its test unpacks and runs them.
DIST ?= dist
dist: wasm
	$(GO) run ./server/cmd/dist -out $(DIST) -release '$(RELEASE)'

# The seed's messages are shown only when it fails: the sign-in block is
# printed once, from the file the seed keeps, on every run.
run: build
	@mkdir -p ./data
	@./bin/betaport seed --data ./data --if-empty >/dev/null 2>./data/seed.log || { cat ./data/seed.log; exit 1; }
	./bin/betaport serve --data ./data

## Checks, side by side, each job's output printed when it is done: vet
## and the wasm tests, every package's race tests, the browser tests (those
## that do not run in parallel first, one at a time, then the others). The
## browser tests wait on what they read, never on a machine's pace: they
## run beside the race tests, as they are checked to (README).
test: lint chromium scaleout-deps axe # installed one after another (two apt-gets at once would clash)
	@$(MAKE) --no-print-directory -j4 --output-sync=target PRECOMPRESS=fast vet test-wasm test-packages test-cli test-dist test-browser

vet: wasm
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./app/...

# The README's GitHub Actions recipes, checked by actionlint (their tests also
# run their steps against a real service).
ACTIONLINT_VERSION := v1.7.12
lint:
	@command -v actionlint >/dev/null 2>&1 || [ -x "$(GOBIN_DIR)/actionlint" ] || { \
	  echo "Installing actionlint $(ACTIONLINT_VERSION) into $(GOBIN_DIR) to check the Actions recipe…"; \
	  $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION); }
	PATH="$(GOBIN_DIR):$$PATH" actionlint server/recipes/github-actions.yml server/recipes/github-actions-curl.yml

# Browser tests need Chromium; they share one browser and the built wasm.
# The scale-out tests (store and API tests on PostgreSQL + S3, replicas) need
# PostgreSQL and versitygw; BETAPORT_SKIP_SCALEOUT=1 skips them (CI never
# sets it).
# The browser tests run without -race: the server code they drive is raced
# by its own packages' tests, and the race detector would make every
# service they start (and the pure-Go SQLite under it) several times
# slower. `make test-race` runs them with it.
# The longest first (go test starts packages in the order given), so that
# no long one is left running alone at the end. server/http runs its tests
# a second time on PostgreSQL + S3, in a child process: that one is built
# without the race detector (see childBinaryVar in
# server/http/zz_scaleout_test.go for why that loses no check). Beside the
# browser tests on 2 cores, server/http took 25 minutes under the detector
# in CI: its timeout is a guard with room, not a measure.
test-packages: wasm scaleout-deps
	@mkdir -p .cache
	$(GO) test -c -o .cache/http-scaleout.test ./server/http
	BETAPORT_HTTP_SCALEOUT_TEST_BINARY=$(CURDIR)/.cache/http-scaleout.test \
	$(GO) test $(RACE) -count=1 -timeout 45m ./server/http ./server/flows \
	  $$($(GO) list ./... | grep -v -e '/server/browser$$' -e '/server/http$$' -e '/server/cli$$' -e '/server/flows$$' -e '/server/cmd/dist$$')

# server/cli runs the betaport command as processes of its test binary,
# hundreds of them: under the race detector each start cost seconds and
# the package passed 30 minutes. It runs without it, beside the others;
# what the commands call (http, publish, the stores) is raced in its own
# packages.
test-cli: wasm scaleout-deps
	$(GO) test -count=1 -timeout 30m ./server/cli

# make dist's test builds the six archives (the command for three systems
# on two processors, each compiled once into Go's build cache: on a machine
# that has built them before, a run only links them) and unpacks and runs
# this machine's. It runs go build, not the race detector's code. Beside
# the other jobs it took 31 minutes in a clean clone (its black-box tests
# build the archives again): the timeout is a guard with room.
test-dist: wasm
	$(GO) test -count=1 -timeout 60m ./server/cmd/dist

test-browser: wasm chromium scaleout-deps axe
	$(GO) test -count=1 -parallel 4 -timeout 60m ./server/browser

test-race: wasm chromium scaleout-deps axe
	$(GO) test $(RACE) -count=1 -parallel 4 -timeout 60m ./server/browser

# The race detector, on every package but the SQLite engine: a C program
# translated to Go (modernc.org/sqlite/lib), not ours, whose instrumented
# code made every test that uses SQLite four to six times slower. Our calls
# into it stay raced, and so does its C library (modernc.org/libc: left
# uninstrumented, the synchronisation it does goes unseen and the detector
# reported races that were not).
RACE := -race -gcflags='modernc.org/sqlite/lib=-race=false'

# app/fetch and the page models run in the browser too: their tests once
# more under GOOS=js (Node).
test-wasm:
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$(GOROOT_DIR)/lib/wasm/go_js_wasm_exec" ./app/fetch ./app/model/...

# axe-core, the accessibility checker the browser tests run on every page.
AXE_VERSION := 4.14.1
axe: .cache/axe/node_modules/axe-core/axe.min.js
.cache/axe/node_modules/axe-core/axe.min.js:
	@command -v npm >/dev/null 2>&1 || { echo "The accessibility checks need npm (Node.js) to install axe-core: sudo apt-get install -y npm" >&2; exit 1; }
	mkdir -p .cache/axe
	cd .cache/axe && npm install --no-audit --no-fund --silent axe-core@$(AXE_VERSION)

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Chromium for the browser tests (apt-get)…"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "Chromium is missing. Install it with: sudo apt-get update && sudo apt-get install -y chromium" >&2; exit 1; \
	  fi; }

## What the scale-out tests start: a throwaway PostgreSQL cluster (initdb,
## postgres) and versitygw, an S3 gateway, both on loopback.
VERSITYGW_VERSION := v1.8.0
GOBIN_DIR := $(or $(shell $(GO) env GOBIN),$(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin)

scaleout-deps: versitygw postgresql

versitygw:
	@[ "$$BETAPORT_SKIP_SCALEOUT" = 1 ] || command -v versitygw >/dev/null 2>&1 || [ -x "$(GOBIN_DIR)/versitygw" ] || { \
	  echo "Installing versitygw $(VERSITYGW_VERSION) into $(GOBIN_DIR) for the scale-out tests (once, about a minute)…"; \
	  $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION); }

postgresql:
	@[ "$$BETAPORT_SKIP_SCALEOUT" = 1 ] || command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing PostgreSQL for the scale-out tests (apt-get)…"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	  else \
	    echo "PostgreSQL is missing. Install it with: sudo apt-get update && sudo apt-get install -y postgresql" >&2; \
	    echo "(or skip the PostgreSQL + S3 tests with BETAPORT_SKIP_SCALEOUT=1)" >&2; exit 1; \
	  fi; }

bench: wasm
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The browser benchmark: Betaport's bundles and testers lists against a
# reference page written with React 19 + SWR (useSWRInfinite) on the same
# API, data and origin, side by side in headless Chromium; it prints medians,
# ranges and ratios (first visible row cold and repeat, repeat-visit bytes,
# memory). It runs only when BETAPORT_BENCH_BROWSER=1 (plain `make bench`
# skips it). BETAPORT_BENCH_RUNS (5), BETAPORT_BENCH_LOADMORES (100) and
# BETAPORT_BENCH_LOADMORE_RUNS (3) tune it.
.PHONY: bench-browser bench-reference
bench-browser: wasm chromium bench-reference
	BETAPORT_BENCH_BROWSER=1 $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./server/browserbench

# The reference page, built with esbuild (npm) into .cache, not committed.
REFERENCE_SRC   := server/browserbench/reference
REFERENCE_BUILD := .cache/browserbench/reference
bench-reference: $(REFERENCE_BUILD)/dist/index.html
$(REFERENCE_BUILD)/dist/index.html: $(REFERENCE_SRC)/package.json $(REFERENCE_SRC)/package-lock.json $(REFERENCE_SRC)/build.mjs $(wildcard $(REFERENCE_SRC)/src/*)
	@command -v npm >/dev/null 2>&1 || { echo "The browser benchmark's reference page needs npm (Node.js) to build: sudo apt-get install -y npm" >&2; exit 1; }
	mkdir -p $(REFERENCE_BUILD)
	rm -rf $(REFERENCE_BUILD)/src
	cp -R $(REFERENCE_SRC)/package.json $(REFERENCE_SRC)/package-lock.json $(REFERENCE_SRC)/build.mjs $(REFERENCE_SRC)/src $(REFERENCE_BUILD)/
	cd $(REFERENCE_BUILD) && npm ci --no-audit --no-fund --silent && node build.mjs

# Every Fuzz target of every package, one after another, FUZZTIME each.
# Their seed corpora (f.Add and testdata/fuzz) run in make test as tests.
FUZZTIME ?= 30s
fuzz: wasm
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

clean:
	rm -rf bin dist web/app.wasm web/app.wasm.br web/app.wasm.gz web/wasm_exec.js
