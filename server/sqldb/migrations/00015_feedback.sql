-- +goose Up
-- Testers' reports on a build (issue 32): what they wrote, what Betaport
-- knew of the build and the browser, and its status for the admins.
CREATE TABLE feedback (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id  INTEGER NOT NULL REFERENCES extensions (id),
    tester_id     INTEGER NOT NULL REFERENCES testers (id),
    bundle_number INTEGER NOT NULL DEFAULT 0,
    version       TEXT    NOT NULL DEFAULT '',
    body          TEXT    NOT NULL,
    browser       TEXT    NOT NULL DEFAULT '',
    os            TEXT    NOT NULL DEFAULT '',
    source        TEXT    NOT NULL CHECK (source IN ('builds-page', 'extension')),
    status        TEXT    NOT NULL CHECK (status IN ('new', 'seen', 'resolved')),
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX feedback_page ON feedback (extension_id, id);
CREATE INDEX feedback_bundle ON feedback (extension_id, bundle_number, status);

-- A report's screenshots: their bytes are in blob storage at blob_key.
CREATE TABLE feedback_screenshots (
    feedback_id INTEGER NOT NULL REFERENCES feedback (id),
    number      INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    size        INTEGER NOT NULL,
    blob_key    TEXT    NOT NULL,
    PRIMARY KEY (feedback_id, number)
);

-- +goose Down
DROP TABLE feedback_screenshots;
DROP TABLE feedback;
