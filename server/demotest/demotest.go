// Package demotest gives tests a data dir holding the small demo, and
// optionally many testers, built once per test binary and copied for each
// test: copying the files costs milliseconds, where loading the demo costs
// seconds (under -race, most of ten) and 100,000 testers most of a minute.
package demotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/testenv"
)

// A dataset is a data dir built once: the small demo, and as many more
// testers on the demo's third extension (which has none).
type dataset struct {
	testers int

	once sync.Once
	dir  string
	demo *demo.Result
	err  error
}

var (
	mu       sync.Mutex
	datasets = map[int]*dataset{}
	root     string // holds every dataset; Cleanup removes it
)

// Copy fills dir (a new, empty data dir) with the small demo's data and n
// more testers on its third extension, and returns the demo's result (a
// copy of its own: a test may change it). The data is built the first time
// it is asked for.
func Copy(t testing.TB, dir string, testers int) *demo.Result {
	t.Helper()
	ds, err := datasetWith(testers)
	if err != nil {
		t.Fatal(err)
	}
	ds.once.Do(ds.build)
	if ds.err != nil {
		t.Fatalf("building the test data (demo and %d testers): %v", ds.testers, ds.err)
	}
	if err := testenv.CopyDir(ds.dir, dir); err != nil {
		t.Fatalf("copying the test data: %v", err)
	}
	var d demo.Result
	b, err := json.Marshal(ds.demo)
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

// Cleanup removes every dataset built; a TestMain calls it after the tests.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if root != "" {
		os.RemoveAll(root)
		root = ""
	}
	datasets = map[int]*dataset{}
}

func datasetWith(testers int) (*dataset, error) {
	mu.Lock()
	defer mu.Unlock()
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "betaport-demotest-"); err != nil {
			return nil, err
		}
	}
	ds := datasets[testers]
	if ds == nil {
		ds = &dataset{testers: testers, dir: filepath.Join(root, fmt.Sprintf("demo-%d", testers))}
		datasets[testers] = ds
	}
	return ds, nil
}

// build loads the dataset through a service that is closed again, so the
// files are complete (SQLite checkpointed).
func (ds *dataset) build() {
	ctx := context.Background()
	m := cli.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = ds.dir
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if ds.err = m.Run(ctx); ds.err != nil {
		return
	}
	defer func() {
		if err := m.Close(); ds.err == nil {
			ds.err = err
		}
	}()
	if ds.demo, ds.err = demo.Load(ctx, m.Store, m.Blobs, demo.Small); ds.err != nil || ds.testers == 0 {
		return
	}
	ext := ds.demo.Extensions[2]
	ts := make([]*betaport.Tester, ds.testers)
	for i := range ts {
		ts[i] = &betaport.Tester{ExtensionID: ext.ID, Email: fmt.Sprintf("t%d@example.com", i), Name: fmt.Sprintf("Tester %d", i), Status: "active"}
	}
	ds.err = m.Store.CreateTesters(ctx, ts)
}
