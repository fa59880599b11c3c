-- +goose Up
-- Grows with every report made, moved or deleted: the "feedback" event of
-- the extension's stream, which the admins' feedback list and the bundles'
-- open counts follow (issue 32).
ALTER TABLE extensions ADD COLUMN feedback_revision INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE extensions DROP COLUMN feedback_revision;
