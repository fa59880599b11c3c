-- +goose Up
CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id       INTEGER NOT NULL REFERENCES teams (id),
    email         TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
);

-- A tester's personal link is kept as the hash of its token.
ALTER TABLE testers ADD COLUMN invite_hash TEXT;
CREATE UNIQUE INDEX testers_invite ON testers (invite_hash) WHERE invite_hash IS NOT NULL;
-- Keyset pages of an extension's testers, newest first.
CREATE INDEX testers_page ON testers (extension_id, id);
CREATE INDEX testers_status_page ON testers (extension_id, status, id);

CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id    INTEGER REFERENCES users (id) ON DELETE CASCADE,
    tester_id  INTEGER REFERENCES testers (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    CHECK ((user_id IS NULL) <> (tester_id IS NULL))
);
CREATE INDEX sessions_tester ON sessions (tester_id);

-- +goose Down
DROP TABLE sessions;
DROP INDEX testers_status_page;
DROP INDEX testers_page;
DROP INDEX testers_invite;
ALTER TABLE testers DROP COLUMN invite_hash;
DROP TABLE users;
