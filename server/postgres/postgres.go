// Package postgres opens Betaport's store on PostgreSQL through pgx: the
// metadata store that several `betaport serve` replicas share. The store
// itself (queries, migrations) is package sqldb, shared with SQLite; the
// dialect differences live in sqldb's Dialect.
package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/betaport/betaport/server/sqldb"
)

// DB is an open PostgreSQL store.
type DB = sqldb.DB

// DefaultMaxConns is how many connections one replica opens at most, unless
// the URL says otherwise with pool_max_conns. Mind the server's
// max_connections: replicas × pool_max_conns must stay below it.
const DefaultMaxConns = 16

// Open connects to the database a postgres:// (or postgresql://) URL names
// and brings its schema up to date. Replicas starting at once migrate one
// after the other (an advisory lock). Besides pgx's own parameters the URL
// takes pool_max_conns.
func Open(ctx context.Context, dsn string) (*DB, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("postgres: %q is not a postgres:// URL", redact(dsn))
	}
	maxConns := DefaultMaxConns
	q := u.Query()
	if v := q.Get("pool_max_conns"); v != "" {
		if maxConns, err = strconv.Atoi(v); err != nil || maxConns < 1 {
			return nil, fmt.Errorf("postgres: pool_max_conns=%q: want a whole number from 1", v)
		}
		q.Del("pool_max_conns")
		u.RawQuery = q.Encode()
	}
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", redact(dsn), err)
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := ping(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: cannot reach %s: %w", redact(dsn), err)
	}
	s, err := sqldb.Open(ctx, db, sqldb.Postgres, redact(dsn))
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func ping(ctx context.Context, db *sql.DB) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// redact hides the password a URL may carry.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
