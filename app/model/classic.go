package model

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// ClassicDedupe keeps a preloaded page fresh long enough that pressing
// "Next" shows it without asking again.
const ClassicDedupe = 30 * time.Second

// ClassicKey is the key (and API path) of page page of extension id's
// bundles.
func ClassicKey(id int64, page int) string {
	return fmt.Sprintf("%s?page=%d&limit=%d", api.BundlesPath(id), page, BundlesPageSize)
}

// ClassicPage is the page number an address of the page-by-page view
// names: its "page" parameter, from 0; a missing or wrong one is page 0.
func ClassicPage(query url.Values) int {
	page, _ := strconv.Atoi(query.Get("page"))
	return max(page, 0)
}

// ClassicConfig is what the page-by-page view gives its model.
type ClassicConfig struct {
	Env Env
	// Cache is the page's fetch cache.
	Cache *fetch.Cache

	// Effects, run on the UI goroutine; any may be nil.
	//
	// Title titles the page.
	Title func(title string)
	// SignedOut is told a rollback the service answered 401.
	SignedOut func(err error)
	// FocusRollback moves the focus to "Roll back to #number" in that
	// bundle's row of the page shown: after a refused rollback, and once
	// the page is read again after one.
	FocusRollback func(number int64)
}

// Classic is the previous/next view of an extension's bundles: the page
// the address names (Back and Forward move between them), read with the
// base model (app/fetch's Query), and the next page read ahead, so that
// "Next" shows it at once and asks nothing. Its fields and methods are for
// the UI goroutine.
type Classic struct {
	cfg ClassicConfig

	// ID is the extension, Page the page shown (from 0).
	ID   int64
	Page int
	// Current is the state of the page shown, Next of the one after it.
	Current, Next fetch.State[[]betaport.Bundle]
	// Rollback is the view's rollbacks (its rows start them).
	Rollback *Rollback

	cur, next *fetch.Query[[]betaport.Bundle]
	stops     []func()
	// refocus is the number of the bundle whose "Roll back" takes the
	// focus once the page shown is read again, 0 for none.
	refocus int64
}

// NewClassic returns the view's model, showing nothing until Nav.
func NewClassic(cfg ClassicConfig) *Classic {
	c := &Classic{cfg: cfg}
	c.Rollback = &Rollback{env: cfg.Env, signedOut: cfg.SignedOut, then: c.rolledBack}
	return c
}

// Nav shows the page the address names (path /extensions/{id}/pages, the
// page number in query): another page of the same extension is a new key
// for both pages (shown from the cache when it is there: Back, and Next,
// ask nothing), another extension opens anew.
func (c *Classic) Nav(path string, query url.Values) {
	if c.cfg.Title != nil {
		c.cfg.Title("Bundles, page by page")
	}
	id, _ := ExtensionID(path)
	c.Page = ClassicPage(query)
	if c.cur != nil && id == c.ID {
		c.cur.SetKey(ClassicKey(id, c.Page))
		c.next.SetKey(ClassicKey(id, c.Page+1))
		return
	}
	c.Close()
	c.ID, c.refocus = id, 0
	c.Rollback.reset()
	opts := fetch.Options[[]betaport.Bundle]{Config: fetch.Config{DedupingInterval: ClassicDedupe}}
	fetcher := jsonFetcher[[]betaport.Bundle](c.cfg.Env.Client)
	ctx := c.cfg.Env.context()
	c.cur = fetch.New(ctx, c.cfg.Cache, ClassicKey(id, c.Page), fetcher, opts)
	c.next = fetch.New(ctx, c.cfg.Cache, ClassicKey(id, c.Page+1), fetcher, opts)
	version := func(s fetch.State[[]betaport.Bundle]) uint64 { return s.Version }
	c.stops = []func(){
		follow(c.cfg.Env, c.cur.Subscribe, c.cur.Snapshot, version, c.currentChanged),
		follow(c.cfg.Env, c.next.Subscribe, c.next.Snapshot, version, func(s fetch.State[[]betaport.Bundle]) { c.Next = s }),
	}
}

// Close stops reading: requests on their way are cancelled, and a
// rollback's answer is not shown.
func (c *Classic) Close() {
	for _, stop := range c.stops {
		stop()
	}
	c.stops = nil
	if c.cur != nil {
		c.cur.Close()
		c.next.Close()
		c.cur, c.next = nil, nil
	}
	c.Rollback.gen++
}

// HasNext reports whether there is a next page (it is read, and not
// empty); Last, whether the page shown is known to be the last.
func (c *Classic) HasNext() bool { return c.Next.HasData && len(c.Next.Data) > 0 }
func (c *Classic) Last() bool    { return c.Next.HasData && len(c.Next.Data) == 0 }

func (c *Classic) currentChanged(s fetch.State[[]betaport.Bundle]) {
	c.Current = s
	if c.refocus != 0 && !s.IsValidating {
		n := c.refocus
		c.refocus = 0
		c.focusRollback(n)
	}
}

// rolledBack reads the pages again after a rollback (a new bundle on top
// moves every row one place down), and the focus goes back to the row it
// was pressed in once the page is read; a refusal keeps the focus there.
func (c *Classic) rolledBack(b betaport.Bundle, nb *betaport.Bundle, err error) {
	if err != nil {
		c.focusRollback(b.Number)
		return
	}
	c.refocus = b.Number
	if c.cur != nil {
		c.cur.Revalidate()
		c.next.Revalidate()
	}
}

func (c *Classic) focusRollback(n int64) {
	if c.cfg.FocusRollback != nil {
		c.cfg.FocusRollback(n)
	}
}
