package http

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// Access says who may call a route. Every API route is registered with one,
// and the access table test walks them all: a route cannot be added without
// saying who may call it.
type Access string

const (
	// Public routes answer anyone.
	Public Access = "public"
	// SignedIn routes answer any signed-in admin or tester.
	SignedIn Access = "signed-in"
	// ExtensionMember routes answer the extension's admins (the owning
	// team's) and its active testers.
	ExtensionMember Access = "extension-member"
	// ExtensionAdmin routes answer the extension's admins only.
	ExtensionAdmin Access = "extension-admin"
	// KeyAuth routes authenticate by an extension key, a signed URL or an
	// update token in the URL, never by cookie, so they need no cross-origin
	// check.
	KeyAuth Access = "key"
	// KeyOrAdmin routes (calls 1 and 3 of the submit flow) authenticate by
	// an extension key in the body or, without one, by the session of an
	// admin of the extension's team: the cross-origin check applies, as to
	// every cookie route (clients that are not browsers send no Origin or
	// Sec-Fetch-Site, and pass it).
	KeyOrAdmin Access = "key-or-extension-admin"
)

// ScopeAnyToken is the scope of the route any access token may call,
// whatever its scopes: its own record (so that a script need not be told
// its extension's id).
const ScopeAnyToken = "any"

// Route is a registered route, who may call it and, for access tokens,
// the scope it needs ("": tokens are refused).
type Route struct {
	Pattern string
	Access  Access
	Scope   string
}

// Routes lists the registered routes (for the access table test).
func (s *Server) Routes() []Route {
	s.Handler()
	return s.routeTable
}

type subjectHandler func(w http.ResponseWriter, r *http.Request, who *subject)

type extensionHandler func(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension)

// route registers a handler that needs no extension, after the access
// check. Access tokens are refused: an extension's admin API is
// routeExtension's (GET /api/extensions excepted, routeScoped).
func (s *Server) route(mux *http.ServeMux, pattern string, a Access, h subjectHandler) {
	s.routeScoped(mux, pattern, a, "", h)
}

// routeScoped is route for a route that access tokens with scope may call.
func (s *Server) routeScoped(mux *http.ServeMux, pattern string, a Access, scope string, h subjectHandler) {
	s.routeTable = append(s.routeTable, Route{pattern, a, scope})
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		who, ok := s.admit(w, r, a, scope)
		if !ok {
			return
		}
		h(w, r, who)
	})
}

// routeExtension registers a handler of one extension's resources, named by
// the {id} path parameter, after the access check. scope is what an access
// token of the extension needs to call it ("": tokens are refused).
func (s *Server) routeExtension(mux *http.ServeMux, pattern string, a Access, scope string, h extensionHandler) {
	if a != ExtensionMember && a != ExtensionAdmin {
		panic("routeExtension " + pattern + ": access must be extension-scoped")
	}
	if scope != "" && scope != ScopeAnyToken && !slices.Contains(betaport.AllScopes, scope) {
		panic("routeExtension " + pattern + ": no scope " + scope)
	}
	s.routeTable = append(s.routeTable, Route{pattern, a, scope})
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		who, ok := s.admit(w, r, SignedIn, scope)
		if !ok {
			return
		}
		ext, ok := s.extensionFor(w, r, who, a)
		if !ok {
			return
		}
		h(w, r, who, ext)
	})
}

// admit applies the checks every route shares: an API query readable as
// it was meant, the cross-origin check for cookie-authenticated changes,
// then who is signed in, and an access token's scope.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, a Access, scope string) (*subject, bool) {
	if isAPI(r.URL.Path) {
		if param, detail := queryProblem(r.URL.RawQuery); detail != "" {
			badParam(w, param, detail)
			return nil, false
		}
	}
	if a != KeyAuth {
		if err := s.crossOrigin.Check(r); err != nil {
			writeProblem(w, problem(http.StatusForbidden, api.ProblemForbidden,
				"This request came from another site. Use Betaport's own pages to make changes."))
			return nil, false
		}
	}
	if a == KeyAuth {
		return &subject{}, true // the key or the signed URL authorises
	}
	who, err := s.authenticate(r)
	if (a == Public || a == KeyOrAdmin) && err != nil {
		// A public route answers even when sessions cannot be read (a
		// health check while the database is down).
		return &subject{}, true
	}
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	if a == Public || a == KeyOrAdmin {
		return who, true
	}
	if who.ended != nil {
		s.Error(w, r, s.accessEnded(r.Context(), who.ended))
		return nil, false
	}
	if who.anonymous() {
		writeProblem(w, problem(http.StatusUnauthorized, api.ProblemUnauthorized,
			"Sign in first: admins at /login, testers through their personal invite link."))
		return nil, false
	}
	if !tokenAllowed(w, who, scope) {
		return nil, false
	}
	return who, true
}

// accessEnded is the problem a revoked tester gets: which extension, and
// whom to ask.
func (s *Server) accessEnded(ctx context.Context, t *betaport.Tester) error {
	ext, err := s.Store.FindExtension(ctx, t.ExtensionID)
	if err != nil {
		return err
	}
	team, err := s.Store.FindTeam(ctx, ext.TeamID)
	if err != nil {
		return err
	}
	ask := "an admin of " + team.Name
	if strings.Contains(t.RevokedBy, "@") {
		ask = t.RevokedBy + " (" + team.Name + ")"
	}
	return problem(http.StatusUnauthorized, api.ProblemAccessEnded,
		"Your access to the beta of "+ext.Name+" ended. If you should still have it, ask "+ask+" to restore it; you will get a new invite link.")
}

var errNoExtension = betaport.Errorf(betaport.ENOTFOUND, "There is no such extension, or it is not yours to see.")

// extensionFor is the one place that decides who may see an extension: the
// admins of the team that owns it and, for member routes, its active
// testers. Everyone else gets 404, the same as for an extension that does not
// exist, so ids cannot be probed.
func (s *Server) extensionFor(w http.ResponseWriter, r *http.Request, who *subject, a Access) (*betaport.Extension, bool) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return nil, false
	}
	ext, err := s.Store.FindExtension(r.Context(), id)
	if betaport.ErrorCode(err) == betaport.ENOTFOUND {
		s.Error(w, r, errNoExtension)
		return nil, false
	} else if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	switch {
	case who.user != nil && who.user.TeamID == ext.TeamID:
		return ext, true
	case who.token != nil && who.token.ExtensionID == ext.ID:
		return ext, true // its scope was checked by admit
	case who.tester != nil && who.tester.ExtensionID == ext.ID:
		if a == ExtensionMember {
			return ext, true
		}
		writeProblem(w, problem(http.StatusForbidden, api.ProblemForbidden,
			"Testers can see builds; this needs an admin of the extension's team."))
		return nil, false
	default:
		s.Error(w, r, errNoExtension)
		return nil, false
	}
}

// isAPI reports whether a path belongs to the JSON API.
func isAPI(path string) bool { return strings.HasPrefix(path, "/api/") }

// queryProblem refuses an API query that gives a parameter twice
// (?limit=1&limit=2: which one was meant?), text that is not UTF-8, a
// broken escape or a ";" between parameters: no API parameter takes
// these, and a handler reading the query would silently drop what it
// could not read. (Chromium's update checks, which may repeat x=, are not
// under /api/.)
func queryProblem(rawQuery string) (param, detail string) {
	seen := map[string]bool{}
	for rest := rawQuery; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil || !utf8.ValidString(name) {
			return "", "The query has a parameter name that is not UTF-8 text. Give names as the API spells them."
		}
		if strings.Contains(pair, ";") {
			return name, "The query separates parameters with \";\". Separate them with \"&\" and percent-encode a \";\" in a value (%3B)."
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return name, fmt.Sprintf("The query's %s has a broken percent escape. Percent-encode a %% in it as %%25.", name)
		}
		if !utf8.ValidString(value) {
			return name, fmt.Sprintf("The query's %s is not UTF-8 text. Percent-encode it as UTF-8.", name)
		}
		if seen[name] {
			return name, fmt.Sprintf("The query gives %s more than once. Give each parameter once.", name)
		}
		seen[name] = true
	}
	return "", ""
}
