-- +goose Up
-- Searching testers for part of an e-mail address or name goes through a
-- trigram index, so that a search at a million testers does not read every
-- one of them. The two databases spell trigram indexes entirely
-- differently: each section below is kept for its own dialect only (see
-- dialectSections in dialect.go).

-- +betaport sqlite
-- An FTS5 index of the testers' e-mails and names, by trigram: a phrase of
-- three characters or more matches wherever it occurs inside a value, and
-- case-insensitively (the tokenizer folds the case of all of Unicode). It
-- keeps no copy of the text (content=''): its rows are trigrams and rowids.
--
-- A row's rowid is minus the tester's key, extension_id << 40 | id (see
-- testerSearchKey in search.go), so that an extension's testers are one
-- range of rowids, newest first in ascending order: a page reads that range
-- the way FTS5 reads fastest, and stops when it is full. The price: FTS5
-- writes out what it holds each time a rowid comes lower than the last one
-- written, so many rows changed at once must be changed newest first, as
-- CreateTesters does (ascending ids would write a segment per tester).
CREATE VIRTUAL TABLE testers_search USING fts5(
    email, name,
    content = '',
    tokenize = 'trigram'
);

-- The triggers keep the index in step with testers. A contentless index
-- forgets a row by being told the values it indexed, hence 'delete' with the
-- old ones. Only a change of e-mail or name (or extension, part of the key)
-- touches the index, not each sign-in that updates last_seen_at.
-- +goose StatementBegin
CREATE TRIGGER testers_search_insert AFTER INSERT ON testers BEGIN
    INSERT INTO testers_search (rowid, email, name)
    VALUES (-((new.extension_id << 40) | new.id), new.email, new.name);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER testers_search_delete AFTER DELETE ON testers BEGIN
    INSERT INTO testers_search (testers_search, rowid, email, name)
    VALUES ('delete', -((old.extension_id << 40) | old.id), old.email, old.name);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER testers_search_update AFTER UPDATE OF extension_id, email, name ON testers BEGIN
    INSERT INTO testers_search (testers_search, rowid, email, name)
    VALUES ('delete', -((old.extension_id << 40) | old.id), old.email, old.name);
    INSERT INTO testers_search (rowid, email, name)
    VALUES (-((new.extension_id << 40) | new.id), new.email, new.name);
END;
-- +goose StatementEnd

-- Index the testers there are already, in ascending rowids.
INSERT INTO testers_search (rowid, email, name)
SELECT -((extension_id << 40) | id), email, name FROM testers ORDER BY extension_id DESC, id DESC;
-- +betaport postgres
-- GIN indexes of pg_trgm's trigrams, which serve LIKE '%…%' on the very
-- expressions FindTesters searches. E-mails are stored lowercased
-- (normalizeTester), so the column itself is indexed. Names are lowercased
-- with ICU's root collation: the database's own lower() follows its
-- LC_CTYPE and, in a C-locale database, folds ASCII letters only ("élodie"
-- would not find "Élodie", as it does in SQLite).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX testers_email_trgm ON testers USING gin (email gin_trgm_ops);
CREATE INDEX testers_name_trgm ON testers USING gin (lower(name COLLATE "und-x-icu") gin_trgm_ops);
-- +betaport end

-- +goose Down
-- +betaport sqlite
DROP TRIGGER testers_search_update;
DROP TRIGGER testers_search_delete;
DROP TRIGGER testers_search_insert;
DROP TABLE testers_search;
-- +betaport postgres
-- pg_trgm stays: it may have been there before, and other tables of the
-- database may use it.
DROP INDEX testers_name_trgm;
DROP INDEX testers_email_trgm;
-- +betaport end
