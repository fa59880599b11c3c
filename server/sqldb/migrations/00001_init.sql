-- +goose Up
CREATE TABLE teams (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL,
    plan       TEXT    NOT NULL CHECK (plan IN ('professional', 'starter')),
    seats      INTEGER NOT NULL CHECK (seats >= 1),
    created_at INTEGER NOT NULL
);

CREATE TABLE extensions (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id            INTEGER NOT NULL REFERENCES teams (id),
    name               TEXT    NOT NULL,
    -- The number of the bundle testers get (0: none yet), and the last
    -- number handed out, so numbers are never reused.
    current_bundle     INTEGER NOT NULL DEFAULT 0,
    last_bundle_number INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL
);
CREATE INDEX extensions_team ON extensions (team_id, id);

CREATE TABLE bundles (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id     INTEGER NOT NULL REFERENCES extensions (id),
    number           INTEGER NOT NULL,
    name             TEXT    NOT NULL,
    version          TEXT    NOT NULL,
    manifest_version INTEGER NOT NULL,
    size             INTEGER NOT NULL,
    sha256           TEXT    NOT NULL,
    file_count       INTEGER NOT NULL,
    source           TEXT    NOT NULL,
    blob_key         TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    UNIQUE (extension_id, number)
);

CREATE TABLE testers (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    email        TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('invited', 'active', 'revoked')),
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER,
    UNIQUE (extension_id, email)
);

-- +goose Down
DROP TABLE testers;
DROP TABLE bundles;
DROP TABLE extensions;
DROP TABLE teams;
