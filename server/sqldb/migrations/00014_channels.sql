-- +goose Up
-- Channels and staged rollouts (issue 31). An extension has named
-- channels; every one has "beta", which holds what the extension served
-- until now. extensions.current_bundle stays beta's current bundle: what
-- the shared update URL serves and what the lists mark current.
CREATE TABLE channels (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id   INTEGER NOT NULL REFERENCES extensions (id),
    name           TEXT    NOT NULL,
    -- What every tester on the channel gets outside a rollout (0: none).
    current_bundle INTEGER NOT NULL DEFAULT 0,
    -- The rollout in progress (active or halted), if any.
    rollout_id     INTEGER,
    created_at     INTEGER NOT NULL,
    UNIQUE (extension_id, name)
);
INSERT INTO channels (extension_id, name, current_bundle, created_at)
SELECT id, 'beta', current_bundle, created_at FROM extensions;

-- Every rollout, kept once it ends (completed or replaced) for the trail.
CREATE TABLE rollouts (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    channel      TEXT    NOT NULL,
    bundle       INTEGER NOT NULL,
    previous     INTEGER NOT NULL,
    percent      INTEGER NOT NULL CHECK (percent BETWEEN 1 AND 100),
    state        TEXT    NOT NULL CHECK (state IN ('active', 'halted', 'completed', 'replaced')),
    started_by   TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX rollouts_channel ON rollouts (extension_id, channel, id);

-- The bundles each channel had: published to it or promoted to it. A
-- tester sees and downloads the bundles of their channel.
CREATE TABLE channel_bundles (
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    channel      TEXT    NOT NULL,
    number       INTEGER NOT NULL,
    added_at     INTEGER NOT NULL,
    PRIMARY KEY (extension_id, channel, number)
);
INSERT INTO channel_bundles (extension_id, channel, number, added_at)
SELECT extension_id, 'beta', number, created_at FROM bundles;

ALTER TABLE testers ADD COLUMN channel TEXT NOT NULL DEFAULT 'beta';
CREATE INDEX testers_channel ON testers (extension_id, channel, id);
-- A key bound to a channel publishes to it only ('' : any channel).
ALTER TABLE api_keys ADD COLUMN channel TEXT NOT NULL DEFAULT '';
-- Where an upload is published, and to what share of the channel.
ALTER TABLE uploads ADD COLUMN channel TEXT NOT NULL DEFAULT 'beta';
ALTER TABLE uploads ADD COLUMN rollout_percent INTEGER NOT NULL DEFAULT 100;
-- Moves with every change to an extension's channels and rollouts, so a
-- list watching the event stream refreshes.
ALTER TABLE extensions ADD COLUMN channels_revision INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE extensions DROP COLUMN channels_revision;
ALTER TABLE uploads DROP COLUMN rollout_percent;
ALTER TABLE uploads DROP COLUMN channel;
ALTER TABLE api_keys DROP COLUMN channel;
DROP INDEX testers_channel;
ALTER TABLE testers DROP COLUMN channel;
DROP TABLE channel_bundles;
DROP TABLE rollouts;
DROP TABLE channels;
