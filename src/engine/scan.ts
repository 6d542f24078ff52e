// Reading every document that matches a query, page by page, with bounded memory:
// - point in time + search_after, sorted by _shard_doc (the cheapest stable order), on Elasticsearch;
// - scroll sorted by _doc on OpenSearch: it has point in time but no _shard_doc tiebreaker, and
//   search_after on _id would load the _id fielddata of the whole index onto the heap;
// - sliced scroll with --slices, because a scroll slice is a function of the document _id, so separate
//   processes (each with its own search context) split the index into the same disjoint parts; PIT slices
//   partition Lucene doc ids and only agree when every slice shares one PIT id;
// - scroll, too, where the engine has no point in time (OpenSearch < 2.4, Elasticsearch < 7.10).

export interface SearchTransport {
  /** One HTTP request to the cluster; resolves to the parsed JSON body, throws on an error status. */
  request<T = any>(method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD', path: string, body?: unknown, query?: Record<string, string>): Promise<T>;
}

export interface ScanHit {
  _index: string;
  _id: string;
  _source?: Record<string, unknown>;
  /** Values of the docvalueFields asked for. */
  fields?: Record<string, unknown[]>;
  _seq_no?: number;
  _primary_term?: number;
  sort?: unknown[];
}

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
  keepAlive?: string;
  /** Whether the engine has point in time; use scroll when false. */
  pointInTime: 'opensearch' | 'elasticsearch' | false;
}

export async function* scanIndex(transport: SearchTransport, options: ScanOptions): AsyncGenerator<ScanHit[]> {
  if (options.pointInTime === 'elasticsearch' && !options.slice) yield* scanWithPointInTime(transport, options);
  else yield* scanWithScroll(transport, options);
}

function searchBody(options: ScanOptions): Record<string, unknown> {
  return {
    size: options.pageSize ?? 1000,
    query: options.query ?? { match_all: {} },
    _source: options.sourceIncludes === undefined ? true : options.sourceIncludes.length ? { includes: options.sourceIncludes } : false,
    seq_no_primary_term: options.seqNoPrimaryTerm ?? false,
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

async function* scanWithScroll(transport: SearchTransport, options: ScanOptions): AsyncGenerator<ScanHit[]> {
  const keepAlive = options.keepAlive ?? '5m';
  const body: Record<string, unknown> = { ...searchBody(options), sort: ['_doc'] };
  if (options.slice && options.slice.max > 1) body.slice = { id: options.slice.id, max: options.slice.max };
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
      page = await transport.request('POST', '/_search/scroll', { scroll: keepAlive, scroll_id: scrollId });
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
