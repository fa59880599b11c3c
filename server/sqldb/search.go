package sqldb

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/betaport/betaport/app/betaport"
)

// Tester search: a tester matches a query when it occurs in their e-mail
// address or name, whatever the case of the letters of either, on both
// databases.
//
// A query of three characters or more goes through the dialect's trigram
// index (migration 00005): SQLite's FTS5 table or PostgreSQL's pg_trgm GIN
// indexes. A shorter query holds no trigram to look up, so it falls back to
// reading the extension's testers newest first until the page is full: quick
// for the one or two characters most testers have, a read of the whole
// extension for a rare pair.
//
// The two backends fold case alike for the letters of all of Unicode, not
// ASCII only: FTS5's trigram tokenizer folds case itself; PostgreSQL lowers
// names with ICU's root collation; and a short query is looked for in each
// of the spellings lower() may leave of it (caseVariants).
//
// What stays slow: a query whose every trigram most testers share (a whole
// e-mail address at a common domain, "123459@example.com") makes both
// indexes read those trigrams' long lists, tens of milliseconds at a
// million testers; and PostgreSQL's pg_trgm finds no trigram in a query
// without letters or digits ("...") or, in a C-locale database, of letters
// beyond ASCII only, which the planner then reads by a scan, as before
// the indexes.

// trigram is the length, in characters, of the shortest query a trigram
// index can look up.
const trigram = 3

// testerSearch is how a dialect finds, through its trigram index, the
// testers whose e-mail or name holds a query of at least three characters.
type testerSearch struct {
	// from is the FROM clause; the testers table is named t in it.
	from string
	// where is the condition, with ? placeholders for args.
	where string
	args  []any
	// order is the ORDER BY clause that lists the testers newest first.
	order string
}

// testerIDBits is how many low bits of a tester's search key hold their id;
// the bits above hold the extension's. Keys stay unique while tester ids
// stay below 2^40 and extension ids below 2^23.
const testerIDBits = 40

// testerSearchKey orders testers by extension, then by id: the key of
// SQLite's search index (migration 00005). A testerID of 1<<testerIDBits
// is the end of the extension's range.
func testerSearchKey(extensionID, testerID int64) int64 {
	return extensionID<<testerIDBits + testerID
}

// sqliteSearch looks the query up as a phrase in the FTS5 index, in the
// extension's range of rowids, cut at the page's cursor. Rowids are minus
// the testers' keys, so they ascend from the newest tester, and ascending is
// the order FTS5 reads fastest (descending takes it about three times as
// long): a page stops after as many matches as it shows, whether the query
// is rare (an e-mail: a handful of matches to find) or common
// ("example.com": the first 20 end the page). The CROSS JOIN keeps the index
// as the outer loop: SQLite would otherwise be free to read testers by id
// and ask the index about each of them.
func sqliteSearch(f betaport.TesterFilter) testerSearch {
	before := f.BeforeID
	if before <= 0 || before > 1<<testerIDBits {
		before = 1 << testerIDBits
	}
	return testerSearch{
		from:  `testers_search CROSS JOIN testers t ON t.id = -testers_search.rowid & ` + strconv.Itoa(1<<testerIDBits-1),
		where: `testers_search MATCH ? AND testers_search.rowid > ? AND testers_search.rowid <= ?`,
		args: []any{ftsPhrase(f.Query),
			-testerSearchKey(f.ExtensionID, before), -testerSearchKey(f.ExtensionID, 0)},
		order: `testers_search.rowid`,
	}
}

// ftsPhrase quotes q as one FTS5 phrase. Inside double quotes every
// character stands for itself (* ^ : ( ) + - and the words AND, OR, NOT,
// NEAR included) except the double quote, which is doubled. The trigram
// tokenizer cuts the phrase into its trigrams, which match only next to
// each other and in order: q as a substring of the e-mail or the name.
func ftsPhrase(q string) string {
	return `"` + strings.ReplaceAll(q, `"`, `""`) + `"`
}

// postgresSearch matches LIKE '%q%' on the very expressions pg_trgm's GIN
// indexes hold (migration 00005). From those expressions' statistics the
// planner chooses between the indexes, for a rare query (few rows to fetch
// and sort), and reading the extension's testers newest first until the
// page is full, for a common one, which the indexes would hand over whole
// to be sorted.
func postgresSearch(f betaport.TesterFilter) testerSearch {
	p := likePattern(strings.ToLower(f.Query))
	return testerSearch{
		from:  `testers t`,
		where: `(t.email LIKE ? OR lower(t.name COLLATE "und-x-icu") LIKE ?)`,
		args:  []any{p, p},
		order: `t.id DESC`,
	}
}

// likeEscaper escapes LIKE's wildcards and its escape character, backslash
// (PostgreSQL's default, so no ESCAPE clause that pg_trgm would have to see
// through).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// likePattern is the LIKE pattern matching s anywhere, every character of s
// standing for itself.
func likePattern(s string) string { return "%" + likeEscaper.Replace(s) + "%" }

// containsAnyCase is the condition that q, a query too short for a
// trigram, occurs in the e-mail or the name in any case. The database's
// lower() folds ASCII letters (SQLite's, and PostgreSQL's in a C-locale
// database) or every letter (PostgreSQL's in another locale): either way
// each letter of a lowered value is one of its cases, so the condition
// looks for each spelling of q in the cases lower() may leave (caseVariants)
// and matches alike on both databases. An all-ASCII query has one spelling,
// and costs what lower(name) alone would.
func (d *Dialect) containsAnyCase(q string) (string, []any) {
	variants := caseVariants(q)
	conds := make([]string, 0, 2*len(variants))
	args := make([]any, 0, 2*len(variants))
	for _, v := range variants {
		conds = append(conds, d.contains("t.email"), d.contains("lower(t.name)"))
		args = append(args, v, v)
	}
	return "(" + strings.Join(conds, " OR ") + ")", args
}

// caseVariants spells s in every combination of the cases its letters may
// have after lower(): "é" is é and É, "Ab" only ab. A letter's cases are its
// orbit under unicode.SimpleFold, which has more than two members for a few
// (k, K and the Kelvin sign), less the ASCII capitals lower() always
// folds. Meant for the one or two characters of a short query: the count
// grows as the product of the orbits.
func caseVariants(s string) []string {
	out := []string{""}
	for _, r := range s {
		next := make([]string, 0, 2*len(out))
		for _, prefix := range out {
			for c := r; ; {
				if c > unicode.MaxASCII || !unicode.IsUpper(c) {
					next = append(next, prefix+string(c))
				}
				if c = unicode.SimpleFold(c); c == r {
					break
				}
			}
		}
		out = next
	}
	return out
}

// searchable reports whether q can match anything: text that is not UTF-8,
// or holds a NUL, is in no tester's e-mail or name (PostgreSQL cannot even
// store it) and is not sent to the database, which would refuse it.
func searchable(q string) bool {
	return utf8.ValidString(q) && !strings.ContainsRune(q, 0)
}
