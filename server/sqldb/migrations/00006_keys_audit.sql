-- +goose Up
-- An extension has any number of named submit keys, each revoked on its
-- own; a key is kept as the SHA-256 of its secret, shown once.
CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    label        TEXT    NOT NULL,
    key_hash     TEXT    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    -- Who made it: an admin's e-mail, or the command line.
    created_by   TEXT    NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX api_keys_page ON api_keys (extension_id, id);

-- The one key each extension had so far becomes its first named key.
INSERT INTO api_keys (extension_id, label, key_hash, created_at, created_by)
SELECT id, 'Key', key_hash, created_at, 'before named keys'
FROM extensions WHERE key_hash IS NOT NULL AND key_hash <> '';
ALTER TABLE extensions DROP COLUMN key_hash;

-- What admins (and the command line) did to keys and testers: who, what,
-- when. Rows are only ever added.
CREATE TABLE audit_events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id      INTEGER NOT NULL REFERENCES teams (id),
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    actor        TEXT    NOT NULL,
    action       TEXT    NOT NULL,
    subject      TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX audit_events_page ON audit_events (extension_id, id);

-- When a tester's current invite link was made: re-sending one makes a new
-- link, and the list shows how old an unanswered invite is.
ALTER TABLE testers ADD COLUMN invited_at INTEGER;
UPDATE testers SET invited_at = created_at;
-- Who revoked a tester: the page a revoked tester sees says whom to ask.
ALTER TABLE testers ADD COLUMN revoked_by TEXT;

-- +goose Down
ALTER TABLE testers DROP COLUMN revoked_by;
ALTER TABLE testers DROP COLUMN invited_at;
DROP TABLE audit_events;
ALTER TABLE extensions ADD COLUMN key_hash TEXT;
UPDATE extensions SET key_hash = (
    SELECT k.key_hash FROM api_keys k
    WHERE k.extension_id = extensions.id AND k.revoked_at IS NULL
    ORDER BY k.id DESC LIMIT 1);
DROP TABLE api_keys;
