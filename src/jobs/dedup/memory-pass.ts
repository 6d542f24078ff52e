// The full pass when every signature fits in memory (--max-cached-signatures): the index is read once, in
// one scan of the stored signatures, and the documents are put into LSH buckets here, band by band (a
// sort of the band's key hashes), instead of by the engine's aggregations partition by partition, which
// read a document again for each partition that holds one of its keys. Each bucket is verified as in the
// partitioned pass; a key held by more than `bucketChunk` documents is verified a chunk at a time.
import type { EngineClient } from '../../engine/client.js';
import type { DocNumbers } from './doc-numbers.js';
import { locationOf } from '../../engine/doc-location.js';
import { readAhead, scanIndex } from '../../engine/scan.js';
import { LargeKeyJoin } from './large-key.js';
import type { BucketMembers, PairVerifier } from './pair-verifier.js';
import { bandRuns, SignaturePool } from './signature-pool.js';
import type { SignatureStore, StoredSignature } from './signature-store.js';

export interface PoolRead {
  index: string;
  scope: Record<string, unknown>;
  /** The stored fields a signature and its facts come from. */
  fields: string[];
  /** Where near-dup's fields are. */
  prefix: string;
  pageSize: number;
  /** Documents in scope (the pool is made this large at first). */
  documents: number;
  /** The numbering to find a signature by id with afterwards (the clusters are cut from the pool). */
  numbers?: DocNumbers;
  onDocuments?: (done: number, total: number) => void;
}

/**
 * Documents per page of the signature read, at most: a page is parsed whole before its signatures are
 * copied out, and a million documents read 5,000 a page left the process 150 MB larger (its heap grown for
 * pages that died old) for no gain in time.
 */
const POOL_PAGE = 1000;

/** Every signature in scope, in one scan, decoded straight into the pool; each document's facts kept by the store. */
export async function readPool(client: EngineClient, store: SignatureStore, read: PoolRead): Promise<SignaturePool> {
  const pool = new SignaturePool(read.documents, read.numbers);
  // Read ahead: the engine reads the next page while this one is decoded (on separate machines, at once).
  const pages = scanIndex(client, { index: read.index, query: read.scope, sourceIncludes: read.fields, pageSize: Math.min(read.pageSize, POOL_PAGE), pointInTime: client.pointInTime });
  for await (const page of readAhead(pages)) {
    for (const hit of page) {
      const document = { id: hit._id, location: locationOf(hit), source: hit._source ?? {} };
      const fields = store.checked(document);
      if (!fields) continue;
      store.keepFacts(document);
      pool.addFields(document.id, fields);
    }
    read.onDocuments?.(pool.size, read.documents);
  }
  return pool;
}

/**
 * The buckets of one band: its large keys are marked first (so later bands know which pairs they may not
 * have decided), then, unless `markOnly` (a band a resumed run had finished), every bucket is verified.
 */
export async function verifyBand(pool: SignaturePool, verifier: PairVerifier, band: number, bucketChunk: number, markOnly = false): Promise<void> {
  const { order, runs } = bandRuns(pool, band);
  for (const [start, end] of runs) if (end - start > bucketChunk) verifier.markLargeKey(band, pool.bandHash(order[start], band));
  if (markOnly) return;
  // The verifier takes members by its numbers: the pool's own when it shares the numbering (dedup's case: no
  // lookup of an id per member per band), else looked up.
  const documents = verifier.clusters.documents;
  const numberOf = pool.numbering === documents ? (i: number) => pool.numberAt(i) : (i: number) => documents.numberOf(pool.ids[i]);
  for (const [start, end] of runs) {
    if (end - start > bucketChunk) {
      const join = new LargeKeyJoin(verifier, band, bucketChunk);
      for (let k = start; k < end; k++) await join.add(pool.ids[order[k]], pool.signature(order[k]));
      await join.finish();
      continue;
    }
    verifier.verifyMembersOf(bucketOf(pool, order, start, end, numberOf), band);
  }
}

/** The documents at order[start, end) of the pool, with their numbers and signatures, as the verifier takes them. */
function bucketOf(pool: SignaturePool, order: Uint32Array, start: number, end: number, numberOf: (slot: number) => number): BucketMembers {
  const ids: string[] = [];
  const numbers = new Int32Array(end - start);
  const signatures: StoredSignature[] = [];
  for (let k = start; k < end; k++) {
    ids.push(pool.ids[order[k]]);
    numbers[k - start] = numberOf(order[k]);
    signatures.push(pool.signature(order[k]));
  }
  return { ids, numbers, signatures };
}
