// The incremental pass of dedup: only the neighbourhood of what was annotated since the last complete run.
// The new documents, the documents that share a band key or the content hash with them, and every member
// of the clusters these touch are verified again, so that a document that changed can also split the
// cluster it was in.
import { storedPath, type StoredField } from '../../stored/layout.js';
import { valueAt } from '../../annotation.js';
import type { EngineClient } from '../../engine/client.js';
import { scanIndex } from '../../engine/scan.js';
import type { PairVerifier } from './pair-verifier.js';
import type { SignatureStore } from './signature-store.js';

/** Cluster ids per query that reads the members of the clusters touched. */
const CLUSTERS_PER_QUERY = 500;

export interface IncrementalSettings {
  index: string;
  prefix: string;
  scope: Record<string, unknown>;
  /** The last complete run's start: documents annotated after it are new. */
  since: string;
  /** Neighbours read per new document (the size of one bucket). */
  bucketChunk: number;
  pageSize: number;
  onNewDocuments?: (count: number) => void;
}

/** Runs the pass; resolves to the documents whose cluster fields this run decides, and how many were new. */
export async function incrementalPass(client: EngineClient, store: SignatureStore, verifier: PairVerifier, settings: IncrementalSettings): Promise<{ decided: Set<string>; newDocuments: number }> {
  const fresh = await verifyNewDocuments(client, store, verifier, settings);
  // Members of every cluster the new documents were in, or now join.
  const decided = new Set([...fresh, ...verifier.involved()]);
  await store.load([...decided]);
  const clusterIds = [...new Set([...decided].map((id) => store.facts.get(id)?.clusterId).filter((c): c is string => Boolean(c)))];
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
  // Re-verify the whole neighbourhood, so a document that changed can also split its old cluster.
  const ids = [...decided];
  verifier.verifyBucket(ids, await store.load(ids));
  return { decided, newDocuments: fresh.length };
}

/** Each new document against the documents that share a band key or its content hash. */
async function verifyNewDocuments(client: EngineClient, store: SignatureStore, verifier: PairVerifier, settings: IncrementalSettings): Promise<string[]> {
  const f = (name: StoredField) => storedPath(settings.prefix, name);
  const fresh: string[] = [];
  for await (const page of scanIndex(client, {
    index: settings.index,
    query: { bool: { filter: [settings.scope, { range: { [f('annotated_at')]: { gt: settings.since } } }] } },
    sourceIncludes: [f('bands'), f('content_hash')],
    pageSize: settings.pageSize,
    pointInTime: client.pointInTime,
  })) {
    for (const hit of page) {
      fresh.push(hit._id);
      // Keys that are not strings (a damaged document) find nothing; the store names the document when it is read.
      const stored = valueAt(hit._source, f('bands'));
      const keys = Array.isArray(stored) ? stored.filter((k): k is string => typeof k === 'string') : [];
      const hash = valueAt(hit._source, f('content_hash'));
      const response = await client.search(settings.index, {
        size: settings.bucketChunk,
        _source: false,
        query: {
          bool: {
            filter: [settings.scope],
            should: [{ terms: { [f('bands')]: keys } }, ...(typeof hash === 'string' ? [{ term: { [f('content_hash')]: hash } }] : [])],
            minimum_should_match: 1,
          },
        },
      });
      const ids = [hit._id, ...response.hits.hits.map((h) => h._id)];
      verifier.verifyBucket(ids, await store.load(ids), { anchor: hit._id });
    }
    settings.onNewDocuments?.(fresh.length);
  }
  return fresh;
}
