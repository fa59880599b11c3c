package http

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/betaport/betaport/app/api"
)

// Cursors are opaque and tamper-evident: a keyset position signed with the
// server secret, scoped to one list. Clients pass them back unchanged.

const (
	defaultLimit = 20
	maxLimit     = 100
)

var b64url = base64.RawURLEncoding

func (s *Server) cursorMAC(list, pos string) string {
	m := hmac.New(sha256.New, append([]byte("betaport cursor\x00"), s.Secret...))
	m.Write([]byte(list + "\x00" + pos))
	return b64url.EncodeToString(m.Sum(nil)[:12])
}

// encodeCursor signs a keyset position of the named list.
func (s *Server) encodeCursor(list string, id int64) string {
	pos := strconv.FormatInt(id, 36)
	return pos + "." + s.cursorMAC(list, pos)
}

// decodeCursor returns the position in a cursor of the named list.
func (s *Server) decodeCursor(list, cursor string) (int64, bool) {
	pos, mac, ok := strings.Cut(cursor, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(s.cursorMAC(list, pos))) {
		return 0, false
	}
	id, err := strconv.ParseInt(pos, 36, 64)
	return id, err == nil && id > 0
}

// badParam answers 400 naming the query parameter at fault.
func badParam(w http.ResponseWriter, name, detail string) {
	writeProblem(w, &api.Problem{Type: api.ProblemBadRequest, Status: http.StatusBadRequest, Param: name, Detail: detail})
}

// limitParam reads ?limit=, defaulting and capping it.
func limitParam(w http.ResponseWriter, q url.Values) (int, bool) {
	v := q.Get("limit")
	if v == "" {
		return defaultLimit, true
	}
	n, ok := api.ParseID(v)
	if !ok || n > maxLimit {
		badParam(w, "limit", "limit must be a whole number from 1 to "+strconv.Itoa(maxLimit)+".")
		return 0, false
	}
	return int(n), true
}

// pageParams reads a cursor-paged list's ?limit= and ?cursor= (signed for
// the named list): the keyset position to read before (0: from the
// newest) and how many to read. It answers the problem itself.
func (s *Server) pageParams(w http.ResponseWriter, q url.Values, list string) (before int64, limit int, ok bool) {
	if limit, ok = limitParam(w, q); !ok {
		return 0, 0, false
	}
	if c := q.Get("cursor"); c != "" || q.Has("cursor") {
		if before, ok = s.decodeCursor(list, c); !ok {
			badParam(w, "cursor", "cursor is not one this list gave out; start again from the first page, without a cursor.")
			return 0, 0, false
		}
	}
	return before, limit, true
}

// cursorPage makes a page of a list read with limit+1 items: the extra item
// says there is a next page, which starts after the last one shown.
func cursorPage[T any](s *Server, list string, items []*T, limit int, id func(*T) int64) api.Page[T] {
	page := api.Page[T]{Data: make([]T, 0, min(len(items), limit))}
	for i, it := range items {
		if i == limit {
			page.NextCursor = s.encodeCursor(list, id(items[i-1]))
			break
		}
		page.Data = append(page.Data, *it)
	}
	return page
}
