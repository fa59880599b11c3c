-- +goose Up
-- Each tester's installed copy checks for updates with a URL of its own:
-- the token's hash finds the tester, its copy sealed with the keyring
-- packs their CRX. Both NULL until the tester first needs them.
ALTER TABLE testers ADD COLUMN update_token_hash TEXT;
ALTER TABLE testers ADD COLUMN update_token_sealed TEXT;
CREATE UNIQUE INDEX testers_update_token ON testers (update_token_hash);
-- What the tester's copy reported at its last check, and when.
ALTER TABLE testers ADD COLUMN installed_version TEXT NOT NULL DEFAULT '';
ALTER TABLE testers ADD COLUMN last_check_at INTEGER;

-- A bundle's CRX keeps what makes its personal copies (crx.Template): the
-- header's size, where the archive's last entry (the manifest) begins,
-- and the SHA-256 state of the signed message up to it (base64). 0 and ''
-- for a package packed before personal copies.
ALTER TABLE bundles ADD COLUMN crx_header_size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bundles ADD COLUMN crx_tail_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bundles ADD COLUMN crx_state TEXT NOT NULL DEFAULT '';
-- The manifest's minimum_chrome_version: older browsers are not offered
-- the bundle.
ALTER TABLE bundles ADD COLUMN min_chrome_version TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE bundles DROP COLUMN min_chrome_version;
ALTER TABLE bundles DROP COLUMN crx_state;
ALTER TABLE bundles DROP COLUMN crx_tail_at;
ALTER TABLE bundles DROP COLUMN crx_header_size;
ALTER TABLE testers DROP COLUMN last_check_at;
ALTER TABLE testers DROP COLUMN installed_version;
DROP INDEX testers_update_token;
ALTER TABLE testers DROP COLUMN update_token_sealed;
ALTER TABLE testers DROP COLUMN update_token_hash;
