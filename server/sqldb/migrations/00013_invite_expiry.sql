-- +goose Up
-- Invite links expire and work once (issue 29): when the current link
-- stops working unused, and when it signed a browser in (after which it
-- works for no other browser). Both in Unix milliseconds.
ALTER TABLE testers ADD COLUMN invite_expires_at INTEGER;
ALTER TABLE testers ADD COLUMN invite_used_at INTEGER;

-- Links made before: each expires 14 days after it was made (links older
-- than that stop working now; their admin sends new ones), and an active
-- tester's link has signed a browser in already.
UPDATE testers SET invite_expires_at = COALESCE(invited_at, created_at) + 1209600000
 WHERE invite_hash IS NOT NULL;
UPDATE testers SET invite_used_at = COALESCE(last_seen_at, invited_at, created_at)
 WHERE invite_hash IS NOT NULL AND status = 'active';

-- +goose Down
ALTER TABLE testers DROP COLUMN invite_used_at;
ALTER TABLE testers DROP COLUMN invite_expires_at;
