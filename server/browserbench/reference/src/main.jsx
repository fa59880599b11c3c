// The reference page of Betaport's browser benchmark: Betaport's two
// infinite lists written the way React + SWR's documentation writes them.
// useSWRInfinite with getKey (page index for bundles, cursor for testers),
// a "Load more" button and an IntersectionObserver sentinel. The page renders
// on the client and calls Betaport's API with the signed-in admin's cookie
// (same origin). It is served under /ref/:
//
//	/ref/extensions/{id}          the bundles list
//	/ref/extensions/{id}/testers  the testers list
import { useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import useSWR from "swr";
import useSWRInfinite from "swr/infinite";

// The page sizes Betaport's lists use (app/ui: bundlesPageSize,
// testersPageSize), so both pages ask for the same pages.
const BUNDLES_LIMIT = 20;
const TESTERS_LIMIT = 100;
// How close (px) the end must come before the sentinel loads more, as in
// Betaport's lists (nearEndMargin).
const NEAR_END = 600;

async function fetcher(url) {
  const res = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!res.ok) {
    const err = new Error(`${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return res.json();
}

function humanSize(n) {
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

function dateTime(s) {
  const d = new Date(s);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// useSentinel calls loadMore while the element is within NEAR_END px of
// the viewport. The observer is made again after each load, and a new
// observer reports where the element is at once, so loading goes on while
// the end stays near.
function useSentinel(loadMore, busy, hasMore) {
  const ref = useRef(null);
  const load = useRef(loadMore);
  load.current = loadMore;
  useEffect(() => {
    const el = ref.current;
    if (!el || busy || !hasMore) return undefined;
    const io = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) load.current();
      },
      { rootMargin: `0px 0px ${NEAR_END}px 0px` },
    );
    io.observe(el);
    return () => io.disconnect();
  }, [busy, hasMore]);
  return ref;
}

function ListFooter({ id, hasMore, busy, onLoadMore, end }) {
  return (
    <div className="list-footer">
      {hasMore ? (
        <button id={id} type="button" disabled={busy} onClick={onLoadMore}>
          {busy ? "Loading…" : "Load more"}
        </button>
      ) : (
        <p className="muted">{end}</p>
      )}
    </div>
  );
}

// Question is a row's confirmation, asked under the row as Betaport asks
// it: its Yes takes the focus, Escape or Cancel closes it. The benchmark's
// "app takes input" click opens it; it never answers it.
function Question({ label, yesClass, yes, onClose }) {
  const ref = useRef(null);
  useEffect(() => ref.current?.focus({ preventScroll: true }), []);
  return (
    <div className="confirm-pop" role="group" aria-label={label} onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <p>{label}</p>
      <button ref={ref} type="button" className={`danger ${yesClass}`}>
        {yes}
      </button>
      <button type="button" onClick={onClose}>
        Cancel
      </button>
    </div>
  );
}

function BundleRow({ b }) {
  const [asking, setAsking] = useState(false);
  return (
    <div className="row bundles-grid" role="row" data-bundle={b.number}>
      <span role="cell">
        #{b.number} {b.current && <span className="badge badge-active">current</span>}
      </span>
      <span role="cell" title={b.versionName ? `${b.version} (uploaded as ${b.versionName})` : b.version}>
        {b.version}
      </span>
      <span role="cell">{humanSize(b.size)}</span>
      <span role="cell">
        <code title={b.sha256}>{b.sha256.slice(0, 12)}</code>
      </span>
      <span role="cell">{dateTime(b.createdAt)}</span>
      <span role="cell">
        {!b.current && (
          <button type="button" className="rollback" aria-expanded={asking} onClick={() => setAsking(!asking)}>
            Roll back to #{b.number}
          </button>
        )}
        <a href={`/api/extensions/${b.extensionId}/bundles/${b.number}/download`} download aria-label={`Download bundle #${b.number}`}>
          Download
        </a>
      </span>
      {asking && <Question label={`Roll back to #${b.number}?`} yesClass="confirm-rollback" yes="Yes, roll back" onClose={() => setAsking(false)} />}
    </div>
  );
}

function Bundles({ id }) {
  const ext = useSWR(`/api/extensions/${id}`, fetcher);
  const getKey = (pageIndex, previousPageData) => {
    if (previousPageData && previousPageData.length < BUNDLES_LIMIT) return null; // the end
    return `/api/extensions/${id}/bundles?page=${pageIndex}&limit=${BUNDLES_LIMIT}`;
  };
  const { data, error, size, setSize, isLoading } = useSWRInfinite(getKey, fetcher);
  const rows = data ? data.flat() : [];
  const isLoadingMore = isLoading || (size > 0 && data && typeof data[size - 1] === "undefined");
  const hasMore = !data || data.length === 0 || data[data.length - 1].length >= BUNDLES_LIMIT;
  const loadMore = () => {
    if (!isLoadingMore && hasMore) setSize(size + 1);
  };
  const sentinel = useSentinel(loadMore, !!isLoadingMore, hasMore && !error);
  return (
    <main>
      <h1>{ext.data ? ext.data.name : "Extension"}</h1>
      <nav>
        <a href={`/ref/extensions/${id}`}>Bundles</a>
        <a href={`/ref/extensions/${id}/testers`}>Testers</a>
      </nav>
      <h2>
        Bundles <span className="muted">({rows.length} loaded)</span>
      </h2>
      {error && <p role="alert">The bundles could not be loaded: {error.message}</p>}
      {!data && !error && <p role="status">Loading bundles…</p>}
      {data && (
        <div role="table" aria-label="Bundles">
          <div className="grid-head bundles-grid" role="row">
            <span role="columnheader">#</span>
            <span role="columnheader">Version</span>
            <span role="columnheader">Size</span>
            <span role="columnheader">SHA-256</span>
            <span role="columnheader">Published</span>
            <span role="columnheader" />
          </div>
          <div id="ref-list" role="rowgroup" data-count={rows.length}>
            {rows.map((b) => (
              <BundleRow key={b.number} b={b} />
            ))}
          </div>
        </div>
      )}
      <div ref={sentinel} aria-hidden="true" />
      {data && <ListFooter id="load-more" hasMore={hasMore} busy={!!isLoadingMore} onLoadMore={loadMore} end="That is every bundle." />}
    </main>
  );
}

function TesterRow({ t }) {
  const [asking, setAsking] = useState(false);
  return (
    <div className="row testers-grid" role="row" data-tester={t.id}>
      <span role="cell">{t.name}</span>
      <span role="cell">{t.email}</span>
      <span role="cell">
        <span className={`badge badge-${t.status}`}>{t.status}</span>
      </span>
      <span role="cell">
        {t.status !== "revoked" && (
          <button type="button" className="revoke" aria-label={`Revoke ${t.email}`} aria-expanded={asking} onClick={() => setAsking(!asking)}>
            Revoke
          </button>
        )}
      </span>
      {asking && <Question label={`Revoke ${t.email}?`} yesClass="confirm-revoke" yes="Yes, revoke" onClose={() => setAsking(false)} />}
    </div>
  );
}

function Testers({ id }) {
  const getKey = (pageIndex, previousPageData) => {
    if (previousPageData && !previousPageData.nextCursor) return null; // the end
    if (pageIndex === 0) return `/api/extensions/${id}/testers?limit=${TESTERS_LIMIT}`;
    return `/api/extensions/${id}/testers?cursor=${encodeURIComponent(previousPageData.nextCursor)}&limit=${TESTERS_LIMIT}`;
  };
  const { data, error, size, setSize, isLoading } = useSWRInfinite(getKey, fetcher);
  const rows = data ? data.flatMap((p) => p.data) : [];
  const isLoadingMore = isLoading || (size > 0 && data && typeof data[size - 1] === "undefined");
  const hasMore = !data || data.length === 0 || !!data[data.length - 1].nextCursor;
  const loadMore = () => {
    if (!isLoadingMore && hasMore) setSize(size + 1);
  };
  const sentinel = useSentinel(loadMore, !!isLoadingMore, hasMore && !error);
  return (
    <main>
      <h1>Testers</h1>
      <nav>
        <a href={`/ref/extensions/${id}`}>Bundles</a>
        <a href={`/ref/extensions/${id}/testers`}>Testers</a>
      </nav>
      <p className="muted">{rows.length} loaded</p>
      {error && <p role="alert">The testers could not be loaded: {error.message}</p>}
      {!data && !error && <p role="status">Loading testers…</p>}
      {data && (
        <div role="table" aria-label="Testers">
          <div className="grid-head testers-grid" role="row">
            <span role="columnheader">Name</span>
            <span role="columnheader">E-mail</span>
            <span role="columnheader">Status</span>
            <span role="columnheader" />
          </div>
          <div id="ref-list" role="rowgroup" data-count={rows.length}>
            {rows.map((t) => (
              <TesterRow key={t.id} t={t} />
            ))}
          </div>
        </div>
      )}
      <div ref={sentinel} aria-hidden="true" />
      {data && <ListFooter id="load-more" hasMore={hasMore} busy={!!isLoadingMore} onLoadMore={loadMore} end="That is every tester." />}
    </main>
  );
}

function App() {
  const m = location.pathname.match(/^\/ref\/extensions\/(\d+)(\/testers)?\/?$/);
  if (!m) return <main><h1>Not found</h1></main>;
  return m[2] ? <Testers id={m[1]} /> : <Bundles id={m[1]} />;
}

createRoot(document.getElementById("root")).render(<App />);
