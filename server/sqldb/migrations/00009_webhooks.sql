-- +goose Up
-- URLs that receive an extension's events. The secret signs each POST, so
-- it is kept as it is, not hashed; a deleted webhook is kept (its
-- deliveries name it) but gets nothing more.
CREATE TABLE webhooks (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    url          TEXT    NOT NULL,
    secret       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    created_by   TEXT    NOT NULL,
    deleted_at   INTEGER
);
CREATE INDEX webhooks_page ON webhooks (extension_id, id);

-- The outbox: each event as receivers get it (body, JSON), written in the
-- same transaction as the publish it reports.
CREATE TABLE webhook_events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    type         TEXT    NOT NULL,
    body         TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
);

-- One event on its way to one webhook. A worker leases a delivery
-- (claimed_until, claimed_by) with a conditional UPDATE before each
-- attempt, so replicas sharing the database never both send one attempt.
CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id      INTEGER NOT NULL REFERENCES webhooks (id),
    event_id        INTEGER NOT NULL REFERENCES webhook_events (id),
    state           TEXT    NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    -- Retried until then (24 hours after the event), then failed.
    expires_at      INTEGER NOT NULL,
    claimed_until   INTEGER NOT NULL DEFAULT 0,
    claimed_by      TEXT    NOT NULL DEFAULT '',
    last_status     INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    response        TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    delivered_at    INTEGER,
    UNIQUE (webhook_id, event_id)
);
-- The worker's question: which pending deliveries are due, and is an
-- earlier one of the same webhook still pending.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (state, webhook_id, id);
CREATE INDEX webhook_deliveries_page ON webhook_deliveries (webhook_id, id);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhooks;
