package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// A dataset is a data dir built once per run of the package: the small demo,
// and optionally many testers on the demo's third extension (which has
// none). Each test's service starts on a copy of it: copying the files
// costs milliseconds, where loading the demo costs seconds and 100,000
// testers most of a minute.
type dataset struct {
	testers int

	once sync.Once
	dir  string
	demo *demo.Result
	err  error
}

var (
	datasetsMu sync.Mutex
	datasets   = map[int]*dataset{}
	// datasetsRoot holds every dataset; TestMain removes it.
	datasetsRoot string
)

func datasetWith(testers int) *dataset {
	datasetsMu.Lock()
	defer datasetsMu.Unlock()
	ds := datasets[testers]
	if ds == nil {
		ds = &dataset{testers: testers}
		datasets[testers] = ds
	}
	return ds
}

// build loads the dataset into a data dir of its own, through a service
// that is closed again so the files are complete (SQLite checkpointed).
func (ds *dataset) build() {
	ds.dir, ds.err = os.MkdirTemp(datasetsRoot, fmt.Sprintf("dataset-%d-", ds.testers))
	if ds.err != nil {
		return
	}
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
	if ds.demo, ds.err = demo.Load(ctx, m.Store, m.Blobs, demo.Small); ds.err != nil {
		return
	}
	if ds.testers == 0 {
		return
	}
	ext := ds.demo.Extensions[2]
	ts := make([]*betaport.Tester, ds.testers)
	for i := range ts {
		ts[i] = &betaport.Tester{ExtensionID: ext.ID, Email: fmt.Sprintf("t%d@example.com", i), Name: fmt.Sprintf("Tester %d", i), Status: "active"}
	}
	ds.err = m.Store.CreateTesters(ctx, ts)
}

// copyTo copies the dataset's files into dir and returns its demo data

func (ds *dataset) copyTo(t *testing.T, dir string) *demo.Result {
	t.Helper()
	ds.once.Do(ds.build)
	if ds.err != nil {
		t.Fatalf("building the test data (demo and %d testers): %v", ds.testers, ds.err)
	}
	err := filepath.WalkDir(ds.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ds.dir, path)
		to := filepath.Join(dir, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying the test data: %v", err)
	}
	var d demo.Result // a copy: a test may change what it is given
	b, err := json.Marshal(ds.demo)
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &d
}
