-- +goose Up
-- Access tokens (issue 33): a script's credential for an extension's admin
-- API, limited to its scopes. Kept as the SHA-256 of the secret, shown once.
CREATE TABLE access_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    name         TEXT    NOT NULL,
    token_hash   TEXT    NOT NULL UNIQUE,
    -- The scopes, comma-separated, in the order betaport.AllScopes lists.
    scopes       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    created_by   TEXT    NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX access_tokens_page ON access_tokens (extension_id, id);

-- +goose Down
DROP TABLE access_tokens;
