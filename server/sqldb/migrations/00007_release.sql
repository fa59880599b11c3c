-- +goose Up
-- Release notes travel with an upload (call 1) to the bundle it publishes.
ALTER TABLE uploads ADD COLUMN release_notes TEXT NOT NULL DEFAULT '';
ALTER TABLE bundles ADD COLUMN release_notes TEXT NOT NULL DEFAULT '';
-- A rollback is a new bundle that serves an older one's zip (the same blob)
-- under a higher version: rollback_of is that older bundle's number.
ALTER TABLE bundles ADD COLUMN rollback_of INTEGER;

-- +goose Down
ALTER TABLE bundles DROP COLUMN rollback_of;
ALTER TABLE bundles DROP COLUMN release_notes;
ALTER TABLE uploads DROP COLUMN release_notes;
