package http

import (
	"crypto/hmac"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// handleAdoption answers an extension's update checks per hour and
// reported version over the last ?days=, newest hour first, cursor-paged;
// with ?count=testers, its testers per UTC day by the version their own
// copy reported last that day.
// This replica's pending counts are written first (Counter.Find), so the
// answer includes every check it answered.
func (s *Server) handleAdoption(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	list := "adoption/" + strconv.FormatInt(ext.ID, 10)
	q := r.URL.Query()
	days, ok := rangeParam(w, q, "days", api.AdoptionDefaultDays, api.AdoptionMaxDays,
		"days must be a whole number from 1 to "+strconv.Itoa(api.AdoptionMaxDays)+": how many days of update checks to list.")
	if !ok {
		return
	}
	limit, ok := rangeParam(w, q, "limit", api.AdoptionDefaultLimit, api.AdoptionMaxLimit,
		"limit must be a whole number from 1 to "+strconv.Itoa(api.AdoptionMaxLimit)+".")
	if !ok {
		return
	}
	f := betaport.AdoptionFilter{ExtensionID: ext.ID, Limit: limit + 1,
		// The hour under way and the 24×days-1 before it.
		Since: s.now().Truncate(time.Hour).Add(-time.Duration(24*days-1) * time.Hour)}
	switch q.Get("count") {
	case betaport.AdoptionByChecks, "":
		if q.Has("count") && q.Get("count") == "" {
			badParam(w, "count", countDetail)
			return
		}
	case betaport.AdoptionByTesters:
		// Whole UTC days: today and the days-1 before it.
		now := s.now().UTC()
		f.ByTesters, f.Since = true, time.Date(now.Year(), now.Month(), now.Day()-(days-1), 0, 0, 0, 0, time.UTC)
		list = "adoption-testers/" + strconv.FormatInt(ext.ID, 10)
	default:
		badParam(w, "count", countDetail)
		return
	}
	if c := q.Get("channel"); c != "" || q.Has("channel") {
		// Checks are counted by version only; testers by who they are,
		// so by the channel they are on now.
		if !f.ByTesters {
			badParam(w, "channel", "channel counts testers: add count=testers (update checks are not kept by tester).")
			return
		}
		if _, err := s.Store.FindChannel(r.Context(), ext.ID, c); err != nil {
			s.Error(w, r, err)
			return
		}
		f.Channel = c
		list += "/" + c // a cursor of one channel's list is no other's
	}
	if c := q.Get("cursor"); c != "" || q.Has("cursor") {
		if f.After, ok = s.decodeAdoptionCursor(list, c); !ok {
			badParam(w, "cursor", "cursor is not one this list gave out; start again from the first page, without a cursor.")
			return
		}
	}
	counts, err := s.Publish.Adoption.Find(r.Context(), f)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	page := api.Page[betaport.AdoptionCount]{Data: make([]betaport.AdoptionCount, 0, min(len(counts), limit))}
	for i, c := range counts {
		if i == limit {
			last := counts[i-1]
			page.NextCursor = s.encodeAdoptionCursor(list, last.Hour, last.Version)
			break
		}
		page.Data = append(page.Data, *c)
	}
	writeJSONPage(w, r, page)
}

const countDetail = "count must be checks (update checks per hour, the default) or testers (testers whose own copy checked, per UTC day)."

// rangeParam reads a whole-number query parameter from 1 to max, def when
// absent, answering the problem itself.
func rangeParam(w http.ResponseWriter, q url.Values, name string, def, max int, detail string) (int, bool) {
	if !q.Has(name) {
		return def, true
	}
	n, ok := api.ParseID(q.Get(name))
	if !ok || n > int64(max) {
		badParam(w, name, detail)
		return 0, false
	}
	return int(n), true
}

// The adoption list's keyset position is an hour and a version: the cursor
// signs both, as the other lists' cursors sign an id.

func (s *Server) encodeAdoptionCursor(list string, hour time.Time, version string) string {
	pos := strconv.FormatInt(hour.Unix(), 36) + "~" + b64url.EncodeToString([]byte(version))
	return pos + "." + s.cursorMAC(list, pos)
}

func (s *Server) decodeAdoptionCursor(list, cursor string) (*betaport.AdoptionPosition, bool) {
	pos, mac, ok := strings.Cut(cursor, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(s.cursorMAC(list, pos))) {
		return nil, false
	}
	h, v, ok := strings.Cut(pos, "~")
	if !ok {
		return nil, false
	}
	secs, err := strconv.ParseInt(h, 36, 64)
	if err != nil || secs <= 0 {
		return nil, false
	}
	version, err := b64url.DecodeString(v)
	if err != nil {
		return nil, false
	}
	return &betaport.AdoptionPosition{Hour: time.Unix(secs, 0).UTC(), Version: string(version)}, true
}
