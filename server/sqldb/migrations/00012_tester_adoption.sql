-- +goose Up
-- Which testers' own copies checked for updates on each UTC day, and the
-- version each reported at its last check that day: the adoption chart
-- counts testers from it (a tester once a day, however often their copy
-- checks). One row per (tester, day), written with each flush of the
-- checks counted in memory, never per check.
CREATE TABLE adoption_testers (
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    -- 00:00 UTC of the day, in Unix milliseconds.
    day          INTEGER NOT NULL,
    tester_id    INTEGER NOT NULL REFERENCES testers (id) ON DELETE CASCADE,
-- +betaport sqlite
    version      TEXT    NOT NULL,
-- +betaport postgres
    version      TEXT    COLLATE "C" NOT NULL,
-- +betaport end
    -- When the reported version was reported (Unix milliseconds): of two
    -- replicas' flushes, the later check wins, in either order.
    checked_at   INTEGER NOT NULL,
    PRIMARY KEY (extension_id, day, tester_id)
);
CREATE INDEX adoption_testers_tester ON adoption_testers (tester_id);

-- The testers revision: it grows whenever what the testers list shows
-- changes (an invite, a link opened, a revoke, a restore, a new link, an
-- installed copy's checks written), so open lists know when to read again.
ALTER TABLE extensions ADD COLUMN testers_revision INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE extensions DROP COLUMN testers_revision;
DROP INDEX adoption_testers_tester;
DROP TABLE adoption_testers;
