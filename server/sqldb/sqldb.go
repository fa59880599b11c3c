// Package sqldb implements betaport.Store over database/sql, once, for every
// SQL database Betaport runs on: SQLite on one machine (package sqlite) and
// PostgreSQL when several replicas share one database (package postgres).
//
// The queries and the migrations are written once. What differs between the
// two dialects (placeholders, column types, a string function, how a unique
// violation is reported, how migrations are locked, the sections of a
// migration only one of them runs) is in dialect.go, and how each searches
// its trigram index of testers in search.go: nowhere else.
package sqldb

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/betaport/betaport/app/betaport"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open store.
type DB struct {
	db      conn
	dialect *Dialect
	name    string // the file or the redacted URL, for error messages
	// added is DeliveriesAdded's channel: one slot, so a nudge waits for
	// the worker without holding up the writer.
	added chan struct{}
}

var _ betaport.Store = (*DB)(nil)

// Open wraps db, which speaks dialect d, and brings its schema up to date.
// name says which database it is in errors (never with a password).
func Open(ctx context.Context, db *sql.DB, d *Dialect, name string) (*DB, error) {
	s := &DB{db: conn{DB: db, d: d}, dialect: d, name: name, added: make(chan struct{}, 1)}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *DB) migrate(ctx context.Context) error {
	p, err := s.migrations()
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("%s: migrate %s: %w", s.dialect.Name, s.name, err)
	}
	return nil
}

// migrations is goose's provider of the migrations as the dialect spells
// them.
func (s *DB) migrations() (*goose.Provider, error) {
	dir, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	dir, err = s.dialect.migrations(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: migrations: %w", s.dialect.Name, err)
	}
	opts, err := s.dialect.gooseOptions()
	if err != nil {
		return nil, fmt.Errorf("%s: migrations: %w", s.dialect.Name, err)
	}
	p, err := goose.NewProvider(s.dialect.goose, s.db.DB, dir, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: migrations: %w", s.dialect.Name, err)
	}
	return p, nil
}

// Close closes the database.
func (s *DB) Close() error { return s.db.Close() }

// Ping checks that the database answers a query.
func (s *DB) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Optimize tidies the indexes after a bulk load, as the dialect needs (see
// Dialect.optimize): searches are as quick right after as they will be.
func (s *DB) Optimize(ctx context.Context) error {
	for _, q := range s.dialect.optimize {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: optimize: %w", s.dialect.Name, err)
		}
	}
	return nil
}

// Empty reports whether no team exists yet.
func (s *DB) Empty(ctx context.Context) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM teams LIMIT 1) AS t").Scan(&n)
	return n == 0, err
}

// inTx runs fn in a transaction, committing when it returns nil.
func (s *DB) inTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	t := &Tx{Tx: tx, d: s.dialect}
	if err := fn(t); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if t.deliveries {
		s.deliveriesAdded()
	}
	return nil
}

// Times are stored as Unix milliseconds: exact, sortable and the same in
// every SQL dialect.
func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func fromNullMillis(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := fromMillis(ms.Int64)
	return &t
}

func nullMillis(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: millis(*t), Valid: true}
}

// SQL is the database pool, for its statistics (metrics).
func (s *DB) SQL() *sql.DB { return s.db.DB }

// BackupTo writes a consistent copy of a SQLite database to path (VACUUM
// INTO: one snapshot, taken while the service keeps serving). PostgreSQL
// is backed up with its own tools (pg_dump).
func (s *DB) BackupTo(ctx context.Context, path string) error {
	if s.dialect != SQLite {
		return betaport.Errorf(betaport.EINVALID, "This store is PostgreSQL: back it up with pg_dump (see the README, \"Backup and restore\").")
	}
	_, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, path)
	return err
}
