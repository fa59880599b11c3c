package sqldb

import (
	"cmp"
	"context"
	"slices"

	"github.com/betaport/betaport/app/betaport"
)

// AddAdoption adds counts to the stored ones in one transaction. The rows
// are written in key order, so two replicas adding to the same rows at once
// take their locks in one order and never deadlock.
func (s *DB) AddAdoption(ctx context.Context, counts []betaport.AdoptionCount) error {
	if len(counts) == 0 {
		return nil
	}
	sorted := slices.Clone(counts)
	slices.SortFunc(sorted, func(a, b betaport.AdoptionCount) int {
		return cmp.Or(cmp.Compare(a.ExtensionID, b.ExtensionID), a.Hour.Compare(b.Hour), cmp.Compare(a.Version, b.Version))
	})
	return s.inTx(ctx, func(tx *Tx) error {
		for _, c := range sorted {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO adoption_checks (extension_id, hour, version, checks) VALUES (?, ?, ?, ?)
				 ON CONFLICT (extension_id, hour, version)
				 DO UPDATE SET checks = adoption_checks.checks + excluded.checks`,
				c.ExtensionID, millis(c.Hour), c.Version, c.Checks); err != nil {
				return err
			}
		}
		return nil
	})
}

// FindAdoption returns a page of an extension's counts since f.Since,
// newest hour first, then by version.
//
// Counting testers (f.ByTesters), a row is a UTC day's and a version's
// testers: each tester once a day, under the version of their copy's last
// check that day.
func (s *DB) FindAdoption(ctx context.Context, f betaport.AdoptionFilter) ([]*betaport.AdoptionCount, error) {
	q := `SELECT hour, version, checks FROM adoption_checks WHERE extension_id = ? AND hour >= ?`
	if f.ByTesters {
		q = `SELECT day AS hour, version, COUNT(*) FROM adoption_testers WHERE extension_id = ? AND day >= ?`
	}
	args := []any{f.ExtensionID, millis(f.Since)}
	if f.ByTesters && f.Channel != "" {
		q += ` AND tester_id IN (SELECT id FROM testers WHERE extension_id = ? AND channel = ?)`
		args = append(args, f.ExtensionID, f.Channel)
	}
	if f.After != nil {
		h := millis(f.After.Hour)
		if f.ByTesters {
			q += ` AND (day < ? OR (day = ? AND version > ?))`
		} else {
			q += ` AND (hour < ? OR (hour = ? AND version > ?))`
		}
		args = append(args, h, h, f.After.Version)
	}
	if f.ByTesters {
		q += ` GROUP BY day, version ORDER BY day DESC, version LIMIT ?`
	} else {
		q += ` ORDER BY hour DESC, version LIMIT ?`
	}
	args = append(args, f.Limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.AdoptionCount{}
	for rows.Next() {
		c := betaport.AdoptionCount{ExtensionID: f.ExtensionID}
		var hour int64
		n := &c.Checks
		if f.ByTesters {
			n = &c.Testers
		}
		if err := rows.Scan(&hour, &c.Version, n); err != nil {
			return nil, err
		}
		c.Hour = fromMillis(hour)
		list = append(list, &c)
	}
	return list, rows.Err()
}
