-- +goose Up
-- How many update checks each extension's installed copies made, by the
-- version they reported, per UTC hour: one row per (extension, hour,
-- version), added to by every replica. Nothing else of a check is kept.
-- Versions compare byte by byte on both databases, so a page of the list
-- (newest hour first, then version) ends and the next begins at the same
-- place on either.
CREATE TABLE adoption_checks (
    extension_id INTEGER NOT NULL REFERENCES extensions (id),
    -- The start of the hour, in Unix milliseconds.
    hour         INTEGER NOT NULL,
-- +betaport sqlite
    version      TEXT    NOT NULL,
-- +betaport postgres
    version      TEXT    COLLATE "C" NOT NULL,
-- +betaport end
    checks       INTEGER NOT NULL,
    PRIMARY KEY (extension_id, hour, version)
);

-- +goose Down
DROP TABLE adoption_checks;
