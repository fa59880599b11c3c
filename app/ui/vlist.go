package ui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"
)

// VList renders a long list of fixed-height rows as a window: only the rows
// near the viewport are in the DOM, between two spacers that keep the
// scroll height right, so 100,000 loaded rows weigh what 100 do. A sentinel
// after the rows asks for more (IntersectionObserver) as it nears the
// viewport.
type VList struct {
	app.Compo

	ID    string
	Label string // the table's accessible name
	// Head is the header row (tableHead): the list reads as a table, its
	// rows numbered after the header for screen readers.
	Head  app.UI
	Count int
	// RowHeight (px) is how tall rows are until one is rendered; then the
	// list measures them, as the CSS makes them taller on narrow screens
	// (or at a large zoom). All rows must be equally tall.
	RowHeight int
	Row       func(i int) app.UI    // renders row i; rows should be components keyed by their item
	OnNearEnd func(ctx app.Context) // the sentinel came near the viewport
	// Key, when set, names row i's item ("" for none). The row in the
	// middle of the viewport is then held in place when rows arrive above
	// it (a new bundle published on top while the reader is further down):
	// no jump under the pointer.
	Key func(i int) string
	// OnReading, when set, is told the row in the middle of the viewport
	// whenever it changes: the list holds the pages around it (MaxPages).
	OnReading func(row int)
	// Busy is true while the list loads; when it turns false the list looks
	// at its sentinel again, so loading goes on while the end stays in view.
	Busy bool

	first, last int  // the rendered window [first, last)
	windowed    bool // the window was computed once
	measured    int  // a rendered row's height (px), 0 before one is
	// anchorKey is the item in the middle of the viewport at the last
	// refresh, at row anchorRow.
	anchorKey   string
	anchorRow   int
	middle      int // the row in the middle of the viewport
	lastMiddle  int // middle at the refresh before
	visible     int // how many rows the viewport shows
	reading     int // the last middle row told to OnReading
	readTimer   *time.Timer
	path        string // the page's path, whose scroll position the list keeps
	onScroll    app.Func
	observer    app.Value
	onIntersect app.Func
	pending     bool
	lastTop     float64 // the list's top (viewport px) at the last window

	// The focus, when it is on a row's control: the row and which of its
	// controls. A focused row is never recycled for another row: it stays
	// rendered (pinned at its place when scrolled out of the window) and,
	// should a render move its content to another element, the focus
	// follows the content, in the same task, before any key can land.
	focusRow, focusControl   int
	focusName                string // its accessible name, to find it again
	focusKey                 string // its item (Key), followed when rows arrive above it
	onFocusIn, onPointerDown app.Func
}

// overscan rows are rendered above and below the viewport, so fast
// scrolling does not show blank space. In the direction the reader is
// scrolling, a further viewport's worth is rendered ahead: a wheel moves
// the page (on the compositor) before the app has rendered the last
// window, and on a busy machine that lag is several frames of a fast wheel.
const overscan = 10

// serverRows is how many rows the server's page holds: a 1440 px tall
// viewport's worth.
const serverRows = 33

// element finds one of the list's elements. Elements are looked up by id:
// a node kept from Render is only the last render's description, not the
// element go-app keeps mounted.
func (v *VList) element(suffix string) app.Value {
	e := app.Window().Get("document").Call("getElementById", v.ID+suffix)
	if e.IsNull() || e.IsUndefined() {
		return nil
	}
	return e
}

// applySpacers sizes the spacers through the CSSOM: the page's CSP refuses
// style attributes, which is how go-app would set them.
func (v *VList) applySpacers() {
	if top := v.element("-top"); top != nil {
		top.Get("style").Call("setProperty", "height", px(v.first*v.rowPx()))
	}
	if bottom := v.element("-bottom"); bottom != nil {
		bottom.Get("style").Call("setProperty", "height", px((v.Count-v.last)*v.rowPx()))
	}
	for _, slot := range []string{"-pin-above", "-pin-below"} {
		if pin := v.element(slot); pin != nil {
			pin.Get("style").Call("setProperty", "top", px(max(v.focusRow, 0)*v.rowPx()))
		}
	}
}

// refresh recomputes the window, re-renders and sizes the spacers after.
func (v *VList) refresh(ctx app.Context) {
	shift := v.anchorShift()
	v.followFocusedItem()
	v.computeWindow()
	v.noteReading(ctx)
	if v.Key != nil && v.middle < v.Count {
		v.anchorKey, v.anchorRow = v.Key(v.middle), v.middle
	}
	ctx.Defer(func(app.Context) {
		v.applySpacers()
		if shift != 0 {
			// In the same task as the render: nothing is painted between.
			app.Window().Call("scrollBy", 0, shift*v.rowPx())
		}
		v.keepFocus()
		v.checkSentinel(ctx)
	})
}

// anchorShift returns by how many rows the item that was in the middle of
// the viewport moved (rows added or removed above it), when the reader is
// inside the list; 0 at its top, where new rows on top should be seen.
func (v *VList) anchorShift() int {
	if v.Key == nil || v.anchorKey == "" || !app.IsClient {
		return 0
	}
	if v.anchorRow < v.Count && v.Key(v.anchorRow) == v.anchorKey {
		return 0
	}
	root := v.element("")
	if root == nil || root.Call("getBoundingClientRect").Get("top").Float() >= 0 {
		return 0
	}
	if j := v.find(v.anchorKey, v.anchorRow); j >= 0 {
		return j - v.anchorRow
	}
	return 0
}

// followFocusedItem keeps the focus with its item when rows arrive or go
// above it (a publish, a rollback, a page read again): the focused row
// becomes the one now holding that item, and keepFocus moves the focus to
// it after the render. An item that is gone leaves the focus where it is.
func (v *VList) followFocusedItem() {
	if v.Key == nil || v.focusKey == "" || v.focusRow < 0 || (v.focusRow < v.Count && v.Key(v.focusRow) == v.focusKey) {
		return
	}
	if j := v.find(v.focusKey, v.focusRow); j >= 0 {
		v.focusRow = j
	}
}

// find returns the row of the item key, looked for outwards from row near
// (a burst of new items moves it by a few rows), or -1.
func (v *VList) find(key string, near int) int {
	const reach = 200 // rows: how far a burst of new items may push it
	for d := 1; d <= reach; d++ {
		for _, j := range []int{near + d, near - d} {
			if j >= 0 && j < v.Count && v.Key(j) == key {
				return j
			}
		}
	}
	return -1
}

// checkSentinel asks for more when the sentinel is near the viewport. The
// IntersectionObserver does this as the page scrolls; this covers a list
// whose new rows left the sentinel where it was (no new intersection).
func (v *VList) checkSentinel(ctx app.Context) {
	s := v.element("-sentinel")
	if s == nil || v.OnNearEnd == nil {
		return
	}
	if s.Call("getBoundingClientRect").Get("top").Float() < app.Window().Get("innerHeight").Float()+nearEndMargin {
		v.OnNearEnd(ctx)
	}
}

// readingDelay is how long the viewport must rest on a row before a jump
// tells the list it is read there: a Home key or a scrollbar flung across
// a long list passes many pages, and fetching each one passed would be
// waste.
const readingDelay = 150 * time.Millisecond

// noteReading tells OnReading the middle row. A hand reading (a wheel, a
// trackpad, the arrow keys: less than a viewport per frame) is told at
// once, so pages dropped ahead of it are fetched before it reaches them;
// a jump is told once the viewport has rested there.
func (v *VList) noteReading(ctx app.Context) {
	step := v.middle - v.lastMiddle
	v.lastMiddle = v.middle
	if v.OnReading == nil || v.middle == v.reading {
		return
	}
	if v.readTimer != nil {
		v.readTimer.Stop()
	}
	if step >= -v.visible && step <= v.visible {
		v.reading = v.middle
		v.OnReading(v.middle)
		return
	}
	v.readTimer = time.AfterFunc(readingDelay, func() {
		ctx.Dispatch(func(app.Context) {
			if v.onScroll == nil || v.OnReading == nil {
				return // dismounted since
			}
			if v.middle != v.reading {
				v.reading = v.middle
				v.OnReading(v.middle)
			}
		})
	})
}

// nearEndMargin is how close (px) the end must come to load more.
const nearEndMargin = 600

// focusable selects the controls of a row that take the focus.
const focusable = `a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])`

// rowOf returns the row of this list that el is in, and which of the
// row's controls el is; -1 when el is in none.
func (v *VList) rowOf(el app.Value) (row, control int) {
	if el.IsNull() || el.IsUndefined() || el.Get("closest").IsUndefined() {
		return -1, -1
	}
	r := el.Call("closest", ".vlist-row")
	if r.IsNull() || r.Get("dataset").Get("list").String() != v.ID {
		return -1, -1
	}
	row, err := strconv.Atoi(r.Get("dataset").Get("row").String())
	if err != nil {
		return -1, -1
	}
	controls := r.Call("querySelectorAll", focusable)
	for i := 0; i < controls.Length(); i++ {
		if controls.Index(i).Equal(el) {
			return row, i
		}
	}
	return row, -1
}

// keepFocus puts the focus back on the focused row's control when a render
// gave its element to another row, or replaced it (the focus fell to the
// body). It leaves a focus the person moved elsewhere alone.
func (v *VList) keepFocus() {
	if v.focusRow < 0 || v.focusControl < 0 {
		return
	}
	doc := app.Window().Get("document")
	active := doc.Get("activeElement")
	if row, _ := v.rowOf(active); row == v.focusRow {
		return
	} else if row < 0 && !active.IsNull() && !active.Equal(doc.Get("body")) {
		return
	}
	r := doc.Call("querySelector", `.vlist-row[data-list="`+v.ID+`"][data-row="`+itoa(v.focusRow)+`"]`)
	if r.IsNull() {
		return
	}
	// The same control, now another element; else the control a row's
	// question put in place of the pressed one ("Yes, revoke" for Revoke);
	// else the one at the same place.
	controls := r.Call("querySelectorAll", focusable)
	for i := 0; i < controls.Length(); i++ {
		if c := controls.Index(i); controlName(c) == v.focusName {
			c.Call("focus", map[string]any{"preventScroll": true})
			return
		}
	}
	if c := r.Call("querySelector", "[data-takes-focus]"); !c.IsNull() {
		c.Call("focus", map[string]any{"preventScroll": true})
		return
	}
	if v.focusControl < controls.Length() {
		controls.Index(v.focusControl).Call("focus", map[string]any{"preventScroll": true})
	}
}

// controlName is a control's accessible name as the rows give it: its
// aria-label, or its text.
func controlName(el app.Value) string {
	if label := el.Call("getAttribute", "aria-label"); !label.IsNull() {
		return label.String()
	}
	return strings.TrimSpace(el.Get("textContent").String())
}

func (v *VList) OnMount(ctx app.Context) {
	v.path = ctx.Page().URL().Path
	v.focusRow, v.focusControl = -1, -1
	v.onFocusIn = app.FuncOf(func(this app.Value, args []app.Value) any {
		target := args[0].Get("target")
		row, control := v.rowOf(target)
		if row < 0 {
			// The focus left the rows (Shift+Tab to the search field):
			// the row stays rendered where it is, so Tab comes back to
			// it, as it would in a list that renders every row. Another
			// row's focus, or a press outside the rows, lets it go.
			return nil
		}
		name := ""
		if control >= 0 {
			name = controlName(target)
		}
		ctx.Dispatch(func(app.Context) {
			v.focusRow, v.focusControl, v.focusName, v.focusKey = row, control, name, ""
			if v.Key != nil && row < v.Count {
				v.focusKey = v.Key(row)
			}
		})
		return nil
	})
	// A press outside the rows ends the pinning even when it lands on
	// nothing focusable (no focusin follows then).
	v.onPointerDown = app.FuncOf(func(this app.Value, args []app.Value) any {
		if row, _ := v.rowOf(args[0].Get("target")); row < 0 {
			ctx.Dispatch(func(app.Context) { v.focusRow, v.focusControl = -1, -1 })
		}
		return nil
	})
	app.Window().Get("document").Call("addEventListener", "focusin", v.onFocusIn)
	app.Window().Get("document").Call("addEventListener", "pointerdown", v.onPointerDown)
	v.refresh(ctx)
	v.onScroll = app.FuncOf(func(app.Value, []app.Value) any {
		// One recomputation per frame, however many scroll events.
		if v.pending {
			return nil
		}
		v.pending = true
		app.Window().Call("requestAnimationFrame", app.FuncOf(func(app.Value, []app.Value) any {
			ctx.Dispatch(func(ctx app.Context) {
				v.pending = false
				if v.onScroll == nil {
					return // dismounted since: the page that scrolled is gone
				}
				rememberScroll(v.path)
				v.refresh(ctx)
			})
			return nil
		}))
		return nil
	})
	app.Window().Call("addEventListener", "scroll", v.onScroll, map[string]any{"passive": true})
	app.Window().Call("addEventListener", "resize", v.onScroll)
	v.onIntersect = app.FuncOf(func(this app.Value, args []app.Value) any {
		entries := args[0]
		for i := 0; i < entries.Length(); i++ {
			if entries.Index(i).Get("isIntersecting").Bool() {
				ctx.Dispatch(func(ctx app.Context) {
					if v.OnNearEnd != nil {
						v.OnNearEnd(ctx)
					}
				})
				break
			}
		}
		return nil
	})
	v.observer = app.Window().Get("IntersectionObserver").New(v.onIntersect, map[string]any{"rootMargin": px(nearEndMargin) + " 0px"})
	ctx.Defer(func(app.Context) {
		if s := v.element("-sentinel"); s != nil && v.observer != nil {
			v.observer.Call("observe", s)
		}
	})
}

func (v *VList) OnDismount() {
	if v.onFocusIn != nil {
		app.Window().Get("document").Call("removeEventListener", "focusin", v.onFocusIn)
		app.Window().Get("document").Call("removeEventListener", "pointerdown", v.onPointerDown)
		v.onFocusIn.Release()
		v.onPointerDown.Release()
		v.onFocusIn = nil
	}
	if v.readTimer != nil {
		v.readTimer.Stop()
	}
	if v.onScroll != nil {
		app.Window().Call("removeEventListener", "scroll", v.onScroll)
		app.Window().Call("removeEventListener", "resize", v.onScroll)
		v.onScroll.Release()
		v.onScroll = nil
	}
	if v.observer != nil {
		v.observer.Call("disconnect")
		v.observer = nil
		v.onIntersect.Release()
	}
}

// OnUpdate keeps the window right when rows are added or removed.
func (v *VList) OnUpdate(ctx app.Context) { v.refresh(ctx) }

// computeWindow picks the rows that intersect the viewport, plus overscan.
func (v *VList) computeWindow() {
	v.windowed = true
	// The server's prerender: the rows that fill a tall screen (it does not
	// know the reader's), as the client's first window is about as many.
	first, last := 0, min(v.Count, serverRows)
	var root app.Value
	if app.IsClient {
		// Before the mount this finds the server's list, still on screen:
		// the app's first render then shows the rows it shows, no fewer.
		root = v.element("")
		if root == nil {
			// A page opened inside the app: the list starts at the top.
			last = min(v.Count, int(app.Window().Get("innerHeight").Float())/v.rowPx()+1+overscan)
		}
	}
	if app.IsClient && v.RowHeight > 0 && root != nil {
		top := root.Call("getBoundingClientRect").Get("top").Float()
		viewport := app.Window().Get("innerHeight").Float()
		if r := root.Call("querySelector", ".vlist-row"); !r.IsNull() {
			if measured := r.Get("offsetHeight").Int(); measured > 0 {
				v.measured = measured
			}
		}
		h := float64(v.rowPx())
		above, below := overscan, overscan
		switch ahead := int(viewport / h); {
		case top < v.lastTop:
			below += ahead // scrolling down
		case top > v.lastTop:
			above += ahead // scrolling up
		}
		v.lastTop = top
		first = max(0, int(math.Floor(-top/h))-above)
		last = min(v.Count, int(math.Ceil((viewport-top)/h))+below)
		if last < first {
			last = first
		}
		if first == 0 {
			// A list below the fold still has its first rows in the page
			// (screen readers, find in page, a short list read whole).
			last = max(last, min(v.Count, overscan))
		}
		v.middle = min(max(int((viewport/2-top)/h), 0), max(v.Count-1, 0))
		v.visible = int(viewport / h)
	}
	v.first, v.last = first, last
}

func (v *VList) Render() app.UI {
	if app.IsServer || !v.windowed {
		// The server has no mount, and the client's first render comes
		// before it: both window here; after, refresh does.
		v.computeWindow()
	}
	v.first = min(v.first, v.Count)
	v.last = min(max(v.last, v.first), v.Count)
	rows := make([]app.UI, 0, v.last-v.first)
	for i := v.first; i < v.last; i++ {
		rows = append(rows, v.row(i))
	}
	// The focused row, scrolled out of the window, stays rendered where it
	// is: before the rows when above them, after when below, so Tab still
	// walks in order. (The slots are always there: go-app matches
	// children by position.)
	var above, below []app.UI
	if f := v.focusRow; f >= 0 && f < v.Count && f < v.first {
		above = append(above, v.row(f))
	} else if f >= v.last && f < v.Count {
		below = append(below, v.row(f))
	}
	head := v.Head
	if head == nil {
		head = app.Div().Hidden(true)
	}
	return app.Div().Body(
		app.Div().Attr("role", "table").Aria("label", v.Label).Aria("rowcount", v.Count+1).Body(
			head,
			app.Div().ID(v.ID).Class("vlist").Attr("role", "rowgroup").DataSet("count", v.Count).Body(
				app.Div().ID(v.ID+"-pin-above").Class("vlist-pin").Body(above...),
				app.Div().ID(v.ID+"-top").Class("vlist-spacer").Aria("hidden", "true"),
				app.Div().Class("vlist-rows").Body(rows...),
				app.Div().ID(v.ID+"-bottom").Class("vlist-spacer").Aria("hidden", "true"),
				app.Div().ID(v.ID+"-pin-below").Class("vlist-pin").Body(below...),
			),
		),
		app.Div().ID(v.ID+"-sentinel").Class("vlist-sentinel").Aria("hidden", "true"),
	)
}

// tableHead is a list's header row: its column names, "" for a column of
// controls (named for screen readers only).
func tableHead(gridClass string, columns ...string) app.UI {
	cells := make([]app.UI, len(columns))
	for i, c := range columns {
		if c == "" {
			cells[i] = app.Span().Attr("role", "columnheader").Body(app.Span().Class("visually-hidden").Text("Actions"))
		} else {
			cells[i] = app.Span().Attr("role", "columnheader").Text(c)
		}
	}
	return app.Div().Class("grid-head "+gridClass).Attr("role", "row").Aria("rowindex", 1).Body(cells...)
}

// cell is one cell of a list row.
func cell(body ...app.UI) app.UI { return app.Span().Attr("role", "cell").Body(body...) }

// row renders row i in a wrapper that says which row it is, for the focus.
func (v *VList) row(i int) app.UI {
	return app.Div().Class("vlist-row").Attr("role", "row").Aria("rowindex", i+2).
		DataSet("list", v.ID).DataSet("row", i).Body(v.Row(i))
}

// rowPx is the height of a row: measured, else RowHeight.
func (v *VList) rowPx() int {
	if v.measured > 0 {
		return v.measured
	}
	return v.RowHeight
}

func px(n int) string { return itoa(n) + "px" }
