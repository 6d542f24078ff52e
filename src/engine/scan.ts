// Reading every document that matches a query, page by page, with bounded memory:
// - point in time + search_after, sorted by _shard_doc (the cheapest stable order), on Elasticsearch;
// - scroll sorted by _doc on OpenSearch: it has point in time but no _shard_doc tiebreaker, and
//   search_after on _id would load the _id fielddata of the whole index onto the heap;
// - sliced scroll with --slices, because a scroll slice is a function of the document _id, so separate
//   processes (each with its own search context) split the index into the same disjoint parts; PIT slices
//   partition Lucene doc ids and only agree when every slice shares one PIT id;
// - scroll, too, where the engine has no point in time (OpenSearch < 2.4, Elasticsearch < 7.10);
// - on Amazon OpenSearch Serverless, which has no scroll: OpenSearch's point in time with search_after,
//   sorted by _id and _index (no two documents share both), the one unique order it offers.
//
// A scroll page is the one request that cannot be sent twice: asked again, the engine hands out the next
// page, and the lost one is gone. So a scroll page is never retried blindly; when its answer is lost (a
// timeout, a dropped connection, a 5xx, an expired scroll), the scan starts a new scroll, either skipping
// the documents it already handed out or from a query the caller gives for what is left. A point-in-time
// page is a plain search on a frozen view with a known search_after: the client retries it as it is.

import { type RequestOptions, totalHits } from './client.js';
import { ScanLostError } from './errors.js';
import { type RetryLog, retryCause } from './retry.js';

/** The part of the client a scan needs: one request at a time, and where to count a restart. */
export interface SearchTransport {
  /** One HTTP request to the cluster; resolves to the parsed JSON body, throws on an error status. */
  request<T = any>(method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD', path: string, body?: unknown, query?: Record<string, string>, options?: RequestOptions): Promise<T>;
  /** Where a restarted scan counts the lost page, with the other retries. */
  readonly retries?: RetryLog;
}

/** One document as a scan yields it. */
export interface ScanHit {
  _index: string;
  _id: string;
  _source?: Record<string, unknown>;
  /** Values of the docvalueFields asked for. */
  fields?: Record<string, unknown[]>;
  _seq_no?: number;
  _primary_term?: number;
  _version?: number;
  /** The document's custom routing, when it was indexed with one. */
  _routing?: string;
  sort?: unknown[];
}

/**
 * What a scroll scan does when a page is lost:
 * - 'skip-seen' (default): a new scroll with the same query, skipping the documents already handed out
 *   (their ids are kept while the scan runs);
 * - a function: called once the page is known lost, it returns the query for what is left to read (the
 *   caller has made its work so far visible, e.g. written and refreshed), and nothing is skipped.
 */
export type LostPageRecovery = 'skip-seen' | ((why: string) => Promise<Record<string, unknown>>);

/** What to scan and how: the index, the query, the fields read, a slice, and which point in time the engine offers. */
export interface ScanOptions {
  index: string;
  query?: Record<string, unknown>;
  /** Source fields to fetch (source filtering); [] fetches no source. */
  sourceIncludes?: string[];
  /** Fields to read from doc values (without loading the source). */
  docvalueFields?: string[];
  pageSize?: number;
  /** Split the work: this process reads slice `id` of `max`. */
  slice?: { id: number; max: number };
  /** Ask for _seq_no and _primary_term, for optimistic concurrency on the writes that follow. */
  seqNoPrimaryTerm?: boolean;
  /** Ask for each document's _version. */
  version?: boolean;
  keepAlive?: string;
  /** Whether the engine has point in time; use scroll when false ('serverless': it has nothing else). */
  pointInTime: 'opensearch' | 'elasticsearch' | 'serverless' | false;
  recovery?: LostPageRecovery;
  /**
   * With 'skip-seen': the documents already handed out, when the caller keeps them anyway (dedup numbers
   * every document it reads), so that the scan does not keep a second set of every id.
   */
  seen?: { has(id: string): boolean; add(id: string): void };
  /** Lost pages in a row before the scan gives up (default 5). */
  maxRestarts?: number;
  /** Told of each restart, with the reason. */
  onRestart?: (why: string) => void;
}

// Declared with the engine's other errors (errors.ts), where the client tells it apart; its users import it here too.
export { ScanLostError };

/**
 * Every document of an index matching the query, a page at a time: a point in time where the engine has one, else a
 * scroll, started again from a known position when a page is lost.
 */
export async function* scanIndex(transport: SearchTransport, options: ScanOptions): AsyncGenerator<ScanHit[]> {
  if (options.pointInTime === 'elasticsearch' && !options.slice) yield* scanWithPointInTime(transport, options);
  else if (options.pointInTime === 'serverless' && !options.slice) yield* scanWithOpenSearchPointInTime(transport, options);
  else yield* scanWithRestarts(transport, options);
}

/**
 * The pages of `pages`, the next one asked for as soon as one is handed out: the engine reads page k+1
 * while the caller works on page k (one page more in memory). Stopping early closes `pages` once the page
 * being read has come (its error, if any, is not the caller's any more).
 */
export async function* readAhead<T>(pages: AsyncIterator<T>): AsyncGenerator<T> {
  let next = pages.next();
  let finished = false;
  try {
    for (;;) {
      const page = await next;
      if (page.done) {
        finished = true;
        return;
      }
      next = pages.next();
      // The next page may fail while the caller works on this one: marked as looked after, so that Node does
      // not end the process over it (a stack trace) before this loop comes to it and throws it to the caller.
      next.catch(() => undefined);
      // One turn of the event loop, so that the request for the next page is on its way before the caller
      // works on this one without yielding (the client sends it only after a few asynchronous steps).
      await new Promise((resolve) => setImmediate(resolve));
      yield page.value;
    }
  } catch (err) {
    finished = true; // the source threw: it is closed already
    throw err;
  } finally {
    if (!finished) {
      await next.catch(() => undefined);
      await pages.return?.(undefined);
    }
  }
}

function searchBody(options: ScanOptions, query = options.query): Record<string, unknown> {
  return {
    size: options.pageSize ?? 1000,
    query: query ?? { match_all: {} },
    _source: options.sourceIncludes === undefined ? true : options.sourceIncludes.length ? { includes: options.sourceIncludes } : false,
    seq_no_primary_term: options.seqNoPrimaryTerm ?? false,
    ...(options.version ? { version: true } : {}),
    ...(options.docvalueFields?.length ? { docvalue_fields: options.docvalueFields } : {}),
  };
}

async function* scanWithPointInTime(transport: SearchTransport, options: ScanOptions): AsyncGenerator<ScanHit[]> {
  const keepAlive = options.keepAlive ?? '5m';
  const index = encodeURIComponent(options.index);
  let pitId = (await transport.request<{ id: string }>('POST', `/${index}/_pit`, undefined, { keep_alive: keepAlive })).id;
  try {
    let searchAfter: unknown[] | undefined;
    for (;;) {
      const body: Record<string, unknown> = {
        ...searchBody(options),
        track_total_hits: false,
        pit: { id: pitId, keep_alive: keepAlive },
        sort: [{ _shard_doc: 'asc' }],
      };
      if (searchAfter) body.search_after = searchAfter;
      // Idempotent: the same point in time and search_after give the same page, so the client may retry it.
      const page = await transport.request<{ pit_id?: string; hits: { hits: ScanHit[] } }>('POST', '/_search', body);
      if (page.pit_id) pitId = page.pit_id; // Elasticsearch may hand back a new id
      const hits = page.hits.hits;
      if (hits.length === 0) return;
      searchAfter = hits[hits.length - 1].sort;
      yield hits;
      if (hits.length < (options.pageSize ?? 1000)) return;
    }
  } finally {
    await closePointInTime(transport, pitId);
  }
}

async function closePointInTime(transport: SearchTransport, pitId: string): Promise<void> {
  try {
    await transport.request('DELETE', '/_pit', { id: pitId });
  } catch {
    // It expires by itself after keep_alive; failing to close it early is not worth failing the job.
  }
}

/**
 * OpenSearch's point in time (its own API, not Elasticsearch's /_pit) with search_after, for Serverless.
 * OpenSearch has no _shard_doc, so the order is _id then _index: sorting by _id loads its field data, which
 * is why the other OpenSearch scans keep to scroll. Each page is a plain search: the client may retry it.
 */
async function* scanWithOpenSearchPointInTime(transport: SearchTransport, options: ScanOptions): AsyncGenerator<ScanHit[]> {
  const keepAlive = options.keepAlive ?? '5m';
  const index = encodeURIComponent(options.index).replace(/%2C/gi, ',').replace(/%2A/gi, '*');
  const pitId = (await transport.request<{ pit_id: string }>('POST', `/${index}/_search/point_in_time`, undefined, { keep_alive: keepAlive })).pit_id;
  try {
    let searchAfter: unknown[] | undefined;
    for (;;) {
      const body: Record<string, unknown> = { ...searchBody(options), track_total_hits: false, pit: { id: pitId, keep_alive: keepAlive }, sort: [{ _id: 'asc' }, { _index: 'asc' }] };
      if (searchAfter) body.search_after = searchAfter;
      const hits = (await transport.request<{ hits: { hits: ScanHit[] } }>('POST', '/_search', body)).hits.hits;
      if (hits.length === 0) return;
      searchAfter = hits[hits.length - 1].sort;
      yield hits;
      if (hits.length < (options.pageSize ?? 1000)) return;
    }
  } finally {
    await transport.request('DELETE', '/_search/point_in_time', { pit_id: [pitId] }).catch(() => undefined);
  }
}

/** A scroll page whose answer never came, or whose scroll is gone: the position is unknown. */
class LostPage extends Error {}

/** Scroll scans, started again from a known position whenever a page is lost. */
async function* scanWithRestarts(transport: SearchTransport, options: ScanOptions): AsyncGenerator<ScanHit[]> {
  const recovery = options.recovery ?? 'skip-seen';
  const seen = recovery === 'skip-seen' ? (options.seen ?? new Set<string>()) : undefined;
  const maxRestarts = options.maxRestarts ?? 5;
  let query = options.query;
  let restartsInARow = 0;
  for (;;) {
    try {
      for await (const hits of scanWithScroll(transport, options, query)) {
        const fresh = seen ? hits.filter((h) => !seen.has(h._id)) : hits;
        if (seen) for (const h of fresh) seen.add(h._id);
        if (fresh.length === 0) continue;
        restartsInARow = 0; // only documents not read before count as progress
        yield fresh;
      }
      return;
    } catch (err) {
      if (!(err instanceof LostPage)) throw err;
      if (++restartsInARow > maxRestarts) {
        throw new ScanLostError(`reading ${options.index} lost ${restartsInARow} scroll pages in a row (last: ${err.message}); the cluster or the network is failing, try again later`);
      }
      options.onRestart?.(err.message);
      if (typeof recovery === 'function') query = await recovery(err.message);
    }
  }
}

async function* scanWithScroll(transport: SearchTransport, options: ScanOptions, query: Record<string, unknown> | undefined): AsyncGenerator<ScanHit[]> {
  const keepAlive = options.keepAlive ?? '5m';
  const body: Record<string, unknown> = { ...searchBody(options, query), sort: ['_doc'] };
  if (options.slice && options.slice.max > 1) body.slice = { id: options.slice.id, max: options.slice.max };
  // The first page opens a new scroll: asking again only opens another (the lost one expires).
  let page = await transport.request<{ _scroll_id?: string; hits: { hits: ScanHit[] } }>(
    'POST',
    `/${encodeURIComponent(options.index)}/_search`,
    body,
    { scroll: keepAlive },
  );
  let scrollId = page._scroll_id;
  try {
    while (page.hits.hits.length > 0) {
      yield page.hits.hits;
      page = await nextScrollPage(transport, scrollId, keepAlive);
      scrollId = page._scroll_id ?? scrollId;
    }
  } finally {
    if (scrollId) {
      try {
        await transport.request('DELETE', '/_search/scroll', { scroll_id: [scrollId] });
      } catch {
        // Expires by itself.
      }
    }
  }
}

async function nextScrollPage(transport: SearchTransport, scrollId: string | undefined, keepAlive: string) {
  try {
    return await transport.request<{ _scroll_id?: string; hits: { hits: ScanHit[] } }>(
      'POST',
      '/_search/scroll',
      { scroll: keepAlive, scroll_id: scrollId },
      undefined,
      { retry: false },
    );
  } catch (err) {
    const cause = retryCause(err);
    const { statusCode, type } = err as { statusCode?: number; type?: string };
    const expired = statusCode === 404;
    // A node that held part of the scroll's context left the cluster (killed, disconnected): the engine
    // answers 500 "Phase failed", and that context is gone as if expired.
    const nodeLost = statusCode === 500 && type === 'search_phase_execution_exception';
    if (cause === undefined && !expired && !nodeLost) throw err;
    // A lost page counts as a retry of its cause (an expired scroll, or one a lost node took, as a dropped connection).
    transport.retries?.record(cause ?? 'connection', 0);
    throw new LostPage(expired ? 'the scroll expired' : `${(err as Error).message}`);
  }
}

/**
 * How many documents match a query: _count, or, for one slice of a sliced job, the total of a sliced
 * scroll (the count API has no slices), so that a slice checks exactly the documents it owns.
 */
export async function countMatching(transport: SearchTransport, options: { index: string; query: Record<string, unknown>; slice?: { id: number; max: number } }): Promise<number> {
  const index = encodeURIComponent(options.index);
  if (!options.slice || options.slice.max <= 1) {
    return (await transport.request<{ count: number }>('POST', `/${index}/_count`, { query: options.query })).count;
  }
  const page = await transport.request<{ _scroll_id?: string; hits: { total: number | { value: number } } }>(
    'POST',
    `/${index}/_search`,
    { size: 1, _source: false, track_total_hits: true, query: options.query, slice: options.slice, sort: ['_doc'] },
    { scroll: '1m' },
  );
  if (page._scroll_id) await transport.request('DELETE', '/_search/scroll', { scroll_id: [page._scroll_id] }).catch(() => undefined);
  return totalHits(page.hits.total);
}
