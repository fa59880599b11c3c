// Package sqlite opens Betaport's store on an SQLite file through
// modernc.org/sqlite (no cgo): the default metadata store on one machine.
// The store itself (queries, migrations) is package sqldb, shared with
// PostgreSQL.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/betaport/betaport/server/sqldb"
)

// DB is an open SQLite store.
type DB = sqldb.DB

// MaxConns is how many connections to the database file one process
// opens at most, MaxIdleConns how many it keeps open while idle.
const (
	MaxConns     = 16
	MaxIdleConns = 4
)

// Open opens (creating when missing) the SQLite file at path and brings its
// schema up to date.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	// WAL lets readers run beside the one writer; the busy timeout makes a
	// writer wait for another instead of failing; _txlock=immediate takes the
	// write lock at BEGIN so two read-then-write transactions cannot deadlock.
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// A bounded pool, as on PostgreSQL: a burst of requests waits for a
	// connection rather than opening one (and its files) each (issue 29:
	// 1,305 descriptors on the database stayed open after a burst).
	db.SetMaxOpenConns(MaxConns)
	db.SetMaxIdleConns(MaxIdleConns)
	db.SetConnMaxIdleTime(time.Minute)
	s, err := sqldb.Open(ctx, db, sqldb.SQLite, path)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
