-- +goose Up
-- An extension's submit key, kept as the SHA-256 of the key.
ALTER TABLE extensions ADD COLUMN key_hash TEXT;

CREATE TABLE uploads (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id  INTEGER NOT NULL REFERENCES extensions (id),
    state         TEXT    NOT NULL CHECK (state IN ('requested', 'received', 'published', 'rejected', 'superseded', 'expired')),
    size          INTEGER NOT NULL DEFAULT 0,
    sha256        TEXT    NOT NULL DEFAULT '',
    problems      TEXT,
    bundle_number INTEGER,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    received_at   INTEGER,
    -- Set once the sweeper has removed the bytes of a dead upload.
    swept         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX uploads_latest ON uploads (extension_id, id);
CREATE INDEX uploads_sweep ON uploads (swept, state);

-- A bundle knows the upload it came from; an upload publishes at most once.
ALTER TABLE bundles ADD COLUMN upload_id INTEGER REFERENCES uploads (id);
CREATE UNIQUE INDEX bundles_upload ON bundles (upload_id) WHERE upload_id IS NOT NULL;

-- +goose Down
DROP INDEX bundles_upload;
ALTER TABLE bundles DROP COLUMN upload_id;
DROP TABLE uploads;
ALTER TABLE extensions DROP COLUMN key_hash;
