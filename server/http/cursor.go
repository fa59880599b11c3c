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
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxLimit {
		badParam(w, "limit", "limit must be a whole number from 1 to "+strconv.Itoa(maxLimit)+".")
		return 0, false
	}
	return n, true
}
