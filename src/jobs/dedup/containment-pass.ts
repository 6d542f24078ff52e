// dedup --containment S: for every document, the larger documents that hold at least S of it (partial
// copies: an excerpt, a page, a text quoted whole inside a longer one), written as contained_in (the best
// first, at most 10) and max_containment. Documents with fewer than 32 sampled tokens are passed over
// (their estimate is too rough to write down). One containment lookup per document, several in flight; the
// documents are read once, a page at a time, so memory holds one page and the documents found contained.
import { storedPath, type StoredField } from '../../stored/layout.js';
import PQueue from 'p-queue';
import { valueAt } from '../../annotation.js';
import type { EngineClient } from '../../engine/client.js';
import { type DocLocation, locationOf } from '../../engine/doc-location.js';
import { scanIndex } from '../../engine/scan.js';
import { MAX_QUERY_TERMS, MIN_TRUSTED_SAMPLE } from '../../sketch/containment.js';
import { holdingQuery, sampleTerms } from '../containment-lookup.js';
import type { ErrorsFile } from '../errors-file.js';
import { type FieldWriterSettings, fieldWriter, type WriteBackResult, writeBackResult } from './write/write-back.js';
import { forCount, plural } from '../../plural.js';

/** Containing documents written per document, the best first. */
export const MAX_CONTAINED_IN = 10;
/** Containment lookups in flight at once. */
const LOOKUPS_IN_FLIGHT = 4;

/** What --containment compares, and how it reads them. */
export interface ContainmentPassSettings {
  index: string;
  prefix: string;
  /** The documents compared (one params value, at least one token). */
  scope: Record<string, unknown>;
  /** Least share of a document inside a larger one. */
  minContainment: number;
  pageSize: number;
  onProgress?: (done: number) => void;
}

/** What is written for a contained document. */
export interface Containment {
  /** The larger documents holding it, the best first. */
  containedIn: string[];
  maxContainment: number;
}

/** What the containment pass found: what to write, what to clear, and the counts for the summary. */
export interface ContainmentPassResult {
  /** Documents at least S inside a larger one, by id. */
  contained: Map<string, Containment & { location: DocLocation }>;
  /** Documents holding contained_in from an earlier run that no longer qualify. */
  stale: Array<{ id: string; location: DocLocation }>;
  lookups: number;
  /** Documents with too few sampled tokens for a containment worth writing (not looked up). */
  tooShort: number;
}

/** Looks up each document in scope for the larger ones holding at least S of it; writeContainment writes them. */
export async function containmentPass(client: EngineClient, settings: ContainmentPassSettings): Promise<ContainmentPassResult> {
  const f = (name: StoredField) => storedPath(settings.prefix, name);
  const result: ContainmentPassResult = { contained: new Map(), stale: [], lookups: 0, tooShort: 0 };
  const queue = new PQueue({ concurrency: LOOKUPS_IN_FLIGHT });
  for await (const page of scanIndex(client, {
    index: settings.index,
    query: settings.scope,
    sourceIncludes: [f('sample'), f('distinct_tokens'), f('contained_in')],
    pageSize: settings.pageSize,
    pointInTime: client.pointInTime,
  })) {
    for (const hit of page) {
      const terms = sampleTerms(valueAt(hit._source, f('sample'))).slice(0, MAX_QUERY_TERMS);
      const size = Number(valueAt(hit._source, f('distinct_tokens')) ?? 0);
      // Its contained_in from an earlier run, cleared when it no longer holds.
      const stale = () => (valueAt(hit._source, f('contained_in')) ?? null) !== null && result.stale.push({ id: hit._id, location: locationOf(hit) });
      // A few sampled tokens are found inside almost any long document: no claim is written for them.
      if (terms.length < MIN_TRUSTED_SAMPLE) {
        result.tooShort++;
        stale();
        continue;
      }
      queue.add(async () => {
        const found = await largerHolders(client, settings, terms, size);
        result.lookups++;
        if (found) result.contained.set(hit._id, { ...found, location: locationOf(hit) });
        else stale();
      });
    }
    await queue.onIdle();
    settings.onProgress?.(result.lookups);
  }
  return result;
}

/** The larger documents holding at least S of the sampled tokens `terms`, best first; undefined when none. */
async function largerHolders(client: EngineClient, settings: ContainmentPassSettings, terms: string[], size: number): Promise<Containment | undefined> {
  const larger = { range: { [storedPath(settings.prefix, 'distinct_tokens')]: { gt: size } } };
  const response = await client.search(settings.index, {
    size: MAX_CONTAINED_IN,
    track_total_hits: false,
    _source: false,
    query: holdingQuery(settings.prefix, terms, settings.minContainment, [settings.scope, larger]),
    sort: [{ _score: 'desc' }, { [storedPath(settings.prefix, 'distinct_tokens')]: 'asc' }],
  });
  const hits = response.hits.hits;
  if (hits.length === 0) return undefined;
  return { containedIn: hits.map((h) => h._id), maxContainment: (hits[0]._score ?? 0) / terms.length };
}

/**
 * Writes contained_in and max_containment (and clears them where they are stale), then asks the engine
 * whether the documents holding contained_in are exactly the ones found.
 */
export async function writeContainment(
  client: EngineClient,
  found: ContainmentPassResult,
  errors: ErrorsFile,
  settings: FieldWriterSettings & { scope: Record<string, unknown> },
): Promise<WriteBackResult> {
  const writer = await fieldWriter(client, errors, settings);
  for (const [id, c] of found.contained) await writer.update(id, c.location, { contained_in: c.containedIn, max_containment: c.maxContainment });
  for (const { id, location } of found.stale) await writer.update(id, location, { contained_in: null, max_containment: null });
  await writer.finish();
  const holding = await client.count(settings.index, { bool: { filter: [settings.scope, { exists: { field: storedPath(settings.prefix, 'contained_in') } }] } });
  if (holding !== found.contained.size) {
    errors.add({ reason: `after the write-back ${plural(holding, 'document')} ${forCount(holding, 'holds', 'hold')} contained_in, but ${found.contained.size} ${forCount(found.contained.size, 'was', 'were')} found contained; run dedup --containment again` });
  }
  return writeBackResult(writer, found.stale.length, holding, found.contained.size);
}
