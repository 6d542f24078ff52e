// The incremental pass of dedup: only the neighbourhood of what is new since the last complete run (annotated
// after its time mark, or written above its shard marks: state/run-marks.ts). The new documents, those sharing
// a band key or the content hash with them, and every member of the clusters these touch are verified again,
// so that a changed document can also split its old cluster. When clusters are cut from families, a new document
// can change its whole family's cut, so the family is read whole (each member met looked up as a new one is)
// until nothing new comes; past `maxLookups` the run is a full one.
import { storedPath, type StoredField } from '../../stored/layout.js';
import { valueAt } from '../../annotation.js';
import type { EngineClient } from '../../engine/client.js';
import { scanIndex } from '../../engine/scan.js';
import type { PairVerifier } from './verify/pair-verifier.js';
import { type ShardMarks, writtenAbove } from './state/run-marks.js';
import type { SignatureStore } from './documents/signature-store.js';

/** Cluster ids per query that reads the members of the clusters touched. */
const CLUSTERS_PER_QUERY = 500;
/** Neighbour lookups sent in one _msearch request while a family is read whole. */
const LOOKUPS_PER_REQUEST = 50;

/** What the incremental pass starts from: the last complete run's marks, the scope and the sizes. */
export interface IncrementalSettings {
  index: string;
  prefix: string;
  scope: Record<string, unknown>;
  /** The last complete run's time mark: documents annotated after it are new. */
  since: string;
  /** The last complete run's marks of each shard: documents written above them are new too. */
  marks?: ShardMarks[];
  /** Neighbours read per new document (the size of one bucket). */
  bucketChunk: number;
  pageSize: number;
  /** Read whole families (the clusters are cut from them), looking up at most this many documents; else only the clusters touched. */
  wholeFamilies?: { maxLookups: number };
  onNewDocuments?: (count: number) => void;
  /** Pairs verified so far, told as the neighbourhood of the new documents is read and verified again. */
  onVerified?: (pairs: number) => void;
}

/** What the incremental pass leaves to the cut and the write-back, or that the run must be a full one. */
export interface IncrementalResult {
  /** The documents whose cluster fields this run decides. */
  decided: Set<string>;
  newDocuments: number;
  /** The families touched needed more lookups than allowed: nothing is decided, the run must be a full one. */
  tooLarge?: { lookups: number };
}

/** Runs the pass; resolves to the documents whose cluster fields this run decides, and how many were new. */
export async function incrementalPass(client: EngineClient, store: SignatureStore, verifier: PairVerifier, settings: IncrementalSettings): Promise<IncrementalResult> {
  const fresh = await verifyNewDocuments(client, store, verifier, settings);
  // Members of every cluster the new documents were in, or now join.
  const decided = new Set([...fresh, ...verifier.involved()]);
  const lookedUp = new Set(fresh);
  const clustersRead = new Set<string>();
  settings.onVerified?.(verifier.verifiedPairs);
  for (;;) {
    await readClusters(client, store, settings, decided, clustersRead);
    if (!settings.wholeFamilies) break;
    const pending = [...decided].filter((id) => !lookedUp.has(id));
    if (pending.length === 0) break;
    if (lookedUp.size + pending.length > settings.wholeFamilies.maxLookups) return { decided: new Set(), newDocuments: fresh.length, tooLarge: { lookups: lookedUp.size + pending.length } };
    for (const id of pending) lookedUp.add(id);
    await lookUpNeighbours(client, store, verifier, settings, pending);
    settings.onVerified?.(verifier.verifiedPairs);
    for (const id of verifier.involved()) decided.add(id);
  }
  // Re-verify the whole neighbourhood, so a document that changed can also split its old cluster.
  const ids = [...decided];
  verifier.verifyBucket(ids, await store.load(ids));
  settings.onVerified?.(verifier.verifiedPairs);
  return { decided, newDocuments: fresh.length };
}

/** Adds to `decided` every member of the clusters its documents were in (those not read yet). */
async function readClusters(client: EngineClient, store: SignatureStore, settings: IncrementalSettings, decided: Set<string>, clustersRead: Set<string>): Promise<void> {
  await store.load([...decided]);
  const clusterIds = [...new Set([...decided].map((id) => store.facts.get(id)?.clusterId).filter((c): c is string => Boolean(c) && !clustersRead.has(c!)))];
  for (const c of clusterIds) clustersRead.add(c);
  for (let i = 0; i < clusterIds.length; i += CLUSTERS_PER_QUERY) {
    for await (const page of scanIndex(client, {
      index: settings.index,
      query: { terms: { [storedPath(settings.prefix, 'cluster_id')]: clusterIds.slice(i, i + CLUSTERS_PER_QUERY) } },
      sourceIncludes: [],
      pageSize: settings.pageSize,
      pointInTime: client.pointInTime,
    })) {
      for (const hit of page) decided.add(hit._id);
    }
  }
}

/** Each of these documents against the documents that share a band key or its content hash, as a new one is. */
async function lookUpNeighbours(client: EngineClient, store: SignatureStore, verifier: PairVerifier, settings: IncrementalSettings, ids: string[]): Promise<void> {
  const f = (name: StoredField) => storedPath(settings.prefix, name);
  for (let i = 0; i < ids.length; i += LOOKUPS_PER_REQUEST) {
    const chunk = ids.slice(i, i + LOOKUPS_PER_REQUEST);
    const read = await client.search(settings.index, { size: chunk.length, query: { bool: { filter: [settings.scope, { ids: { values: chunk } }] } }, _source: [f('bands'), f('content_hash')] });
    const hits = read.hits.hits;
    const answers = hits.length === 0 ? [] : await client.msearch(settings.index, hits.map((hit) => neighbourQuery(hit._source ?? {}, settings)));
    for (const [k, hit] of hits.entries()) {
      const found = [hit._id, ...answers[k].hits.hits.map((h) => h._id)];
      verifier.verifyBucket(found, await store.load(found), { anchor: hit._id });
    }
  }
}

/** The search for a document's neighbours: the documents in scope that share a band key or its content hash. */
function neighbourQuery(source: Record<string, unknown>, settings: IncrementalSettings): Record<string, unknown> {
  const f = (name: StoredField) => storedPath(settings.prefix, name);
  // Keys that are not strings (a damaged document) find nothing; the store names the document when it is read.
  const stored = valueAt(source, f('bands'));
  const keys = Array.isArray(stored) ? stored.filter((k): k is string => typeof k === 'string') : [];
  const hash = valueAt(source, f('content_hash'));
  return {
    size: settings.bucketChunk,
    _source: false,
    query: {
      bool: {
        filter: [settings.scope],
        should: [{ terms: { [f('bands')]: keys } }, ...(typeof hash === 'string' ? [{ term: { [f('content_hash')]: hash } }] : [])],
        minimum_should_match: 1,
      },
    },
  };
}

/** Each new document against the documents that share a band key or its content hash. */
async function verifyNewDocuments(client: EngineClient, store: SignatureStore, verifier: PairVerifier, settings: IncrementalSettings): Promise<string[]> {
  const fresh = new Set<string>();
  for await (const page of newDocuments(client, settings)) {
    for (const hit of page) {
      if (fresh.has(hit._id)) continue;
      fresh.add(hit._id);
      const response = await client.search(settings.index, neighbourQuery(hit._source ?? {}, settings));
      const ids = [hit._id, ...response.hits.hits.map((h) => h._id)];
      verifier.verifyBucket(ids, await store.load(ids), { anchor: hit._id });
    }
    settings.onNewDocuments?.(fresh.size);
  }
  return [...fresh];
}

/** The documents in scope annotated after the time mark, then those signed before it but written above the marks. */
async function* newDocuments(client: EngineClient, settings: IncrementalSettings): AsyncGenerator<Array<{ _id: string; _source?: Record<string, unknown> }>> {
  const f = (name: StoredField) => storedPath(settings.prefix, name);
  const source = [f('bands'), f('content_hash')];
  yield* scanIndex(client, {
    index: settings.index,
    query: { bool: { filter: [settings.scope, { range: { [f('annotated_at')]: { gt: settings.since } } }] } },
    sourceIncludes: source,
    pageSize: settings.pageSize,
    pointInTime: client.pointInTime,
  });
  if (!settings.marks) return;
  // (Those annotated after the time mark were read above.)
  yield* writtenAbove(client, settings.index, settings.marks, { bool: { filter: [settings.scope, { range: { [f('annotated_at')]: { lte: settings.since } } }] } }, source);
}
