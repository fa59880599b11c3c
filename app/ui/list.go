package ui

import (
	"context"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/fetch"
)

// The one list of the app's list pages (bundles, testers, builds). A page
// holds a pageList (made in OnInit, opened in OnNav, closed in OnDismount)
// and renders it with listView, giving its row component and each row's
// key, as go-app builds a menu from small item components. Everything else
// a list does lives here, once: opening the infinite model with the
// server's first page as fallback, binding it to the page (a 401 signs
// out), bringing the scroll position back, retry, load more (button and
// sentinel), the loading, empty, error and end views, and the windowed,
// ARIA-table rows (VList) with the pages MaxPages dropped as placeholders.

// rowHeight is the height of a list row in px; web/app.css says the same.
const rowHeight = 44

// listSpec is what stays the same about one page's list.
type listSpec[P, T any] struct {
	// name names the list's controls and views: retry-NAME,
	// load-more-NAME, NAME-end, NAME-error, NAME-empty.
	name    string
	section string // the id of the list's section; "" for none
	rowsID  string // the id of its rows (VList.ID)
	label   string // the table's accessible name
	grid    string // the rows' grid class, which placeholders share
	columns []string
	// The texts of the loading view and of the end of the list.
	loading, end string

	pageSize int
	items    func(page P) []T
	// hasMore is the InfiniteOptions.HasMore of index-based pages; nil
	// leaves it to getKey.
	hasMore func(pages []P) bool
}

// pageList is a page's infinite list and its last state. The page reads
// the state (its live checks and optimistic updates read and Mutate the
// list); only the list's binding writes it.
type pageList[P, T any] struct {
	listSpec[P, T]

	list      *fetch.Infinite[P]
	state     fetch.InfiniteState[P]
	closeList func()
}

// open (re)starts the list over getKey on the page's context. The server's
// first page, when the page was rendered with it, is the fallback the list
// shows at once (the cache was primed with it: nothing is asked again);
// onChange, if set, runs after each new state, on the UI goroutine.
func (l *pageList[P, T]) open(ctx app.Context, getKey fetch.GetKey[P], onChange func(app.Context)) {
	l.close()
	l.list = fetch.NewInfinite(context.Background(), listCache(), getKey,
		fetch.JSONFetcher[P](httpOptions()),
		fetch.InfiniteOptions[P]{HasMore: l.hasMore, FallbackData: prerenderedPages[P](firstKey(getKey)),
			MaxPages: keptPages(l.pageSize), Count: func(p P) int { return len(l.items(p)) }})
	path, restored := ctx.Page().URL().Path, false
	l.closeList = bindPage(ctx, l.list, func(s fetch.InfiniteState[P]) {
		l.state = s
		if !restored && s.Data != nil {
			restored = true
			restoreScroll(ctx, path)
		}
		if onChange != nil {
			onChange(ctx)
		}
	})
}

// follow shows list, which a page's model opened and holds (app/model),
// at state s: the page hands them over before each render; the model
// closes the list.
func (l *pageList[P, T]) follow(list *fetch.Infinite[P], s fetch.InfiniteState[P]) {
	l.list, l.state = list, s
}

// close closes the list: its requests are cancelled.
func (l *pageList[P, T]) close() {
	if l.closeList != nil {
		l.closeList()
		l.closeList, l.list = nil, nil
	}
}

// prerender shows, on the server, the first page getKey names when the
// server fetched it for this visitor (PrerenderRequests).
func (l *pageList[P, T]) prerender(getKey fetch.GetKey[P]) {
	pages := prerenderedPages[P](firstKey(getKey))
	if pages == nil {
		return
	}
	more := false
	if l.hasMore != nil {
		more = l.hasMore(pages)
	} else {
		_, more = getKey(1, &pages[0])
	}
	l.state = fetch.InfiniteState[P]{Data: pages, Size: 1, HasMore: more}
}

// rows places the list's items on rows (fetch.RowsOf).
func (l *pageList[P, T]) rows() fetch.Rows[T] { return fetch.RowsOf(l.state, l.items) }

// topKey is the key of the list's first row, 0 while there is none or its
// page is not held.
func (l *pageList[P, T]) topKey(rows fetch.Rows[T], key func(T) int64) int64 {
	if item, ok := rows.At(0); ok {
		return key(item)
	}
	return 0
}

// revalidate reads every held page again: Retry, Refresh.
func (l *pageList[P, T]) revalidate() {
	if l.list != nil {
		l.list.Revalidate()
	}
}

func (l *pageList[P, T]) onRetry(app.Context, app.Event) { l.revalidate() }

func (l *pageList[P, T]) onLoadMore(app.Context, app.Event) { l.loadMore() }

// loadMore grows the list by one page (SWR: setSize(size + 1)): the "Load
// more" button.
func (l *pageList[P, T]) loadMore() {
	// A busy button stays focusable (aria-disabled): a press while the
	// page loads does nothing.
	if l.list != nil && !l.list.Snapshot().IsLoadingMore {
		// The reader is at the end, where the new page goes: it is held
		// (MaxPages) before the viewport has settled on it.
		l.list.SetReading(-1)
		l.list.SetSizeFunc(func(n int) int { return n + 1 })
	}
}

// nearEnd is what the list's sentinel does: one more page, unless there
// is none, one is loading, or the list shows an error (retrying is the
// person's call).
func (l *pageList[P, T]) nearEnd(app.Context) {
	if s := l.state; s.HasMore && !s.IsLoadingMore && s.Err == nil {
		l.loadMore()
	}
}

// heldPages counts the pages whose data the list holds (MaxPages).
func (l *pageList[P, T]) heldPages() int {
	n := 0
	for i := range l.state.Data {
		if l.state.Dropped == nil || !l.state.Dropped[i] {
			n++
		}
	}
	return n
}

// firstKey is the key of a list's first page ("" when there is none).
func firstKey[P any](getKey fetch.GetKey[P]) string {
	key, _ := getKey(0, nil)
	return key
}

// keptPages is the MaxPages of a list whose pages hold pageSize rows: at
// least three pages and 150 rows, enough for a tall viewport and its
// overscan while the reader is between two pages. Pages farther away are
// dropped, from the list and the cache, and fetched again when read.
func keptPages(pageSize int) int { return max(3, (150+pageSize-1)/pageSize) }

// listView is the list component: a page's list in its section, headed by
// what the page gives, showing the loading, empty or error view until
// there are rows, then the windowed rows, an error with its Retry (kept
// over the rows: a failed "load more" leaves them), and the footer with
// "Load more" or the end of the list.
type listView[P, T any] struct {
	app.Compo

	List *pageList[P, T]
	// Header comes first in the section: the list's heading, its count.
	Header app.UI
	// Empty is the text of the empty view.
	Empty string
	// Row renders an item as its row component; Key is the item's id. A
	// row is its own component, keyed by its item, so its handlers never
	// see another row's item (go-app #1107).
	Row func(T) app.UI
	Key func(T) int64
}

func (v *listView[P, T]) Render() app.UI {
	l, s := v.List, v.List.state
	section := app.Section()
	if l.section != "" {
		section = section.ID(l.section)
	}
	rows := l.rows()
	switch {
	case s.Data == nil && s.Err != nil:
		return section.Body(v.Header, v.errorView())
	case s.Data == nil:
		return section.Body(v.Header, statusView("loading", l.loading))
	case rows.Len() == 0:
		return section.Body(v.Header, statusView("empty", v.Empty).ID(l.name+"-empty"))
	}
	return section.DataSet("size", s.Size).DataSet("validating", s.IsValidating).
		DataSet("loading-more", s.IsLoadingMore).DataSet("has-more", s.HasMore).
		DataSet("held", l.heldPages()).DataSet("cached", listCache().Len()).DataSet("top", l.topKey(rows, v.Key)).Body(
		v.Header,
		v.rowsView(rows),
		// The error and the footer are always in the tree, shown or
		// hidden: go-app matches children by position, and a button that
		// moves to another position is a new node whose clicks go nowhere.
		v.errorView(),
		app.Div().Class("list-footer").Body(
			button().ID("load-more-"+l.name).Type("button").Hidden(!s.HasMore).
				Aria("disabled", s.IsLoadingMore).OnClick(l.onLoadMore).
				Text(map[bool]string{true: "Loading…", false: "Load more"}[s.IsLoadingMore]),
			app.P().ID(l.name+"-end").Class("muted").Hidden(s.HasMore).Text(l.end),
		),
	)
}

// errorView is the list's error and its Retry, hidden while there is none.
func (v *listView[P, T]) errorView() app.UI {
	l := v.List
	return app.Div().ID(l.name+"-error").Hidden(l.state.Err == nil).Body(
		statusView("error", listError(l.state.Err)),
		button().ID("retry-"+l.name).Type("button").Text("Retry").OnClick(l.onRetry),
	)
}

// rowsView is the list's rows as a window (VList): a dropped page's rows
// are placeholders, the row the reader rests on tells the list which pages
// to hold, and each row's key keeps the row under the reader in place when
// rows arrive above it.
func (v *listView[P, T]) rowsView(rows fetch.Rows[T]) app.UI {
	l := v.List
	return &VList{
		ID: l.rowsID, Label: l.label, Head: tableHead(l.grid, l.columns...),
		OnNearEnd: l.nearEnd, Busy: l.state.IsValidating,
		Count: rows.Len(), RowHeight: rowHeight,
		OnReading: func(r int) {
			if l.list != nil {
				l.list.SetReading(rows.Page(r))
			}
		},
		Key: func(i int) string {
			if item, ok := rows.At(i); ok {
				return itoa(int(v.Key(item)))
			}
			return ""
		},
		Row: func(i int) app.UI {
			if item, ok := rows.At(i); ok {
				return v.Row(item)
			}
			return placeholderRow(l.grid)
		},
	}
}

// placeholderRow stands for a row whose page is being fetched again.
func placeholderRow(class string) app.UI {
	return app.Div().Class("row row-placeholder "+class).Aria("busy", "true").Body(
		app.Span().Attr("role", "cell").Class("muted").Text("Loading…"),
	)
}
