package fetch

// InfiniteOptions configure an Infinite list. The zero value gives SWR's
// defaults.
type InfiniteOptions[P any] struct {
	// Config holds every option of the base model (deduping, focus,
	// reconnect, refresh, retry, keepPreviousData).
	Config

	// InitialSize (SWR initialSize, default 1) is the number of pages a new
	// list loads when the cache holds no size for its first key. It is read
	// once: changing it later has no effect.
	InitialSize int

	// RevalidateAll (SWR revalidateAll, default false): every revalidation
	// refetches every page, not only the first and the missing ones.
	RevalidateAll bool

	// RevalidateFirstPage (SWR revalidateFirstPage, default true): every
	// revalidation, including each SetSize, refetches the first page, so
	// new items at the top are seen when loading more. With ETags that
	// costs a 304, not a body.
	RevalidateFirstPage *bool

	// PersistSize (SWR persistSize, default false): when the first page's
	// key changes, keep the current size. When false, the size becomes the
	// one the cache holds for the new first key — back to InitialSize unless
	// a list with that first key was open (or still is) in this cache.
	PersistSize bool

	// AllAtOnce shows a revalidation's new pages only once all of them have
	// arrived, as SWR does. By default each page appears as it arrives.
	AllAtOnce bool

	// Parallel (SWR parallel, default false) fetches the pages of a
	// revalidation at once instead of one after another. It is for lists
	// whose keys do not depend on the previous page (IndexKeys): getKey is
	// always called with a nil previous page — by a revalidation, and as
	// well by everything else that asks for a key (HasMore, SetSize,
	// Mutate, MutateFunc, SetGetKey, a change of a page in the cache). The
	// first error wins, as in SWR; the pages show when all have arrived.
	//
	// So getKey cannot end a parallel list by looking at the last page
	// (IndexKeys's null after an empty page never happens): the list ends
	// where getKey returns null for an index, and HasMore stays true until
	// then. A list that ends with its data needs the HasMore option (e.g.
	// IndexHasMore), the explicit has-more this package adds to SWR.
	Parallel bool

	// HasMore, when set, decides InfiniteState.HasMore from the loaded
	// pages (e.g. IndexHasMore). By default there is more while getKey
	// gives a key for the page after the last loaded one (called with a
	// nil previous page under Parallel, so a parallel list of unknown
	// length needs HasMore).
	HasMore func(pages []P) bool

	// FallbackData (SWR fallbackData) is shown while nothing of the first
	// key is cached; nil means none. It does not count as loaded.
	FallbackData []P

	// OnSuccess is called after a revalidation of every page succeeded,
	// with the first page's key and the pages; OnError when one page failed,
	// with that page's key. Both run without locks held.
	OnSuccess func(firstKey string, pages []P)
	OnError   func(key string, err error)

	// Compare (SWR compare) reports whether two versions of a page are
	// equal; an equal answer keeps the page already shown. Default:
	// reflect.DeepEqual. It must be pure (it runs under locks).
	Compare func(a, b P) bool

	// MaxPages (TanStack Query's maxPages) bounds the pages whose data the
	// list holds; 0 means no bound. The MaxPages pages nearest the reader
	// (SetReading) are held; the others are dropped: their entry in Data
	// holds P's zero value and InfiniteState.Dropped marks it, their data
	// leaves the cache, and their keys are kept, so Size, HasMore and the
	// number of pages do not change. Reading near a dropped page again
	// fetches it. A revalidation fetches only held pages, plus pages whose
	// key is new or moved (needed to follow the chain; they are dropped
	// again at once), so the first page is revalidated only while held.
	MaxPages int

	// Count, when set, counts a page's items; InfiniteState.Counts then
	// gives every page's count, a dropped page's as it was when dropped,
	// so a UI can draw placeholders of the right height. It must be pure.
	Count func(page P) int
}

// InfiniteState is an Infinite list's snapshot: what SWR's
// useSWRInfinite returns, minus the functions, plus HasMore and
// IsLoadingMore.
type InfiniteState[P any] struct {
	// Key is the first page's key ("" when getKey(0, nil) is null).
	Key string
	// Data (SWR data) holds one value per loaded page, in page order. It is
	// nil until the first page has loaded — callers show "loading" then —
	// and may hold previous or fallback pages, see Config.KeepPreviousData.
	// It is a fresh slice each time; the pages themselves are shared.
	Data []P
	// Err (SWR error) is the error of the last revalidation; the pages
	// loaded before the failing one stay in Data.
	Err error
	// IsValidating (SWR isValidating) and IsLoading (SWR isLoading:
	// validating with no page of this first key loaded yet).
	IsValidating bool
	IsLoading    bool
	// Size (SWR size) is the number of pages that will be fetched and
	// returned (fewer when getKey returns null first).
	Size int
	// HasMore reports whether there is a page after the last loaded one;
	// a "load more" button shows when it is true.
	HasMore bool
	// IsLoadingMore reports whether pages up to Size are being fetched.
	IsLoadingMore bool
	// Dropped, with MaxPages, marks the pages whose data was dropped (their
	// Data entry is P's zero value); nil when no page is dropped.
	Dropped []bool
	// Counts, with InfiniteOptions.Count, is the item count of each page
	// in Data, dropped ones included; nil without Count.
	Counts []int
	// Version grows with every change; equal versions mean equal states.
	Version uint64
}
