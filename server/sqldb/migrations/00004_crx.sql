-- +goose Up
-- An extension's CRX signing key (PKCS#8 PEM) and the secret token
-- in its update URL. A table of its own, so that no query of extensions
-- ever reads the private key.
CREATE TABLE extension_signing (
    extension_id INTEGER PRIMARY KEY REFERENCES extensions (id),
    private_key  TEXT    NOT NULL,
    update_token TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    rotated_at   INTEGER
);
-- The extension's ID in Chromium, from the public half of its key.
ALTER TABLE extensions ADD COLUMN chrome_id TEXT NOT NULL DEFAULT '';

-- version is the served version; version_name the uploaded one when the
-- served version had to be derived from it.
ALTER TABLE bundles ADD COLUMN version_name TEXT NOT NULL DEFAULT '';
-- The bundle's signed CRX, and the hash of the update token it embeds.
ALTER TABLE bundles ADD COLUMN crx_key TEXT NOT NULL DEFAULT '';
ALTER TABLE bundles ADD COLUMN crx_size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bundles ADD COLUMN crx_sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE bundles ADD COLUMN crx_token_hash TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE bundles DROP COLUMN crx_token_hash;
ALTER TABLE bundles DROP COLUMN crx_sha256;
ALTER TABLE bundles DROP COLUMN crx_size;
ALTER TABLE bundles DROP COLUMN crx_key;
ALTER TABLE bundles DROP COLUMN version_name;
ALTER TABLE extensions DROP COLUMN chrome_id;
DROP TABLE extension_signing;
