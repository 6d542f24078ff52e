// near-dup dedup: every near-duplicate cluster of an index, found by the engine and verified here.
//  1. LSH buckets with two or more documents: a terms aggregation over the band keys with
//     min_doc_count 2, split into partitions so memory stays bounded whatever the index size; exact
//     duplicates (equal content_hash) are buckets too.
//  2. Every pair inside a bucket is verified with the stored MinHash (estimated Jaccard).
//  3. Verified pairs are joined into clusters (union-find); each cluster gets a canonical document, and
//     cluster_id, duplicate_of, is_canonical, cluster_size and max_similarity are written back with bulk
//     partial updates. Documents that were in a cluster before and are not any more are cleared.
import { createWriteStream } from 'node:fs';
import { DEFAULT_PREFIX, underPrefix, valueAt } from '../annotation.js';
import type { EngineClient } from '../engine/client.js';
import { EngineResponseError } from '../engine/errors.js';
import { scanIndex } from '../engine/scan.js';
import { UsageError, UserError } from '../errors.js';
import { absentFields, mappedFields } from '../engine/fields.js';
import { deserializeLeanMinhash } from '../sketch/lean-minhash.js';
import { minhashJaccard } from '../sketch/minhash.js';
import { hammingDistance } from '../sketch/simhash.js';
import type { RetrySnapshot } from '../engine/retry.js';
import { BulkWriter } from './bulk-writer.js';
import { DedupJournal, type JournalPair } from './dedup-journal.js';
import { defaultCheckpointPath, readCheckpoint, writeCheckpoint } from './checkpoint.js';
import { ErrorsFile } from './errors-file.js';
import { joinBucket } from './bucket-join.js';
import { UnionFind } from './union-find.js';

export type CanonicalRule = 'oldest' | 'newest' | 'longest' | { field: string; order: 'asc' | 'desc' };

export interface DedupOptions {
  index: string;
  prefix?: string;
  /** Pairs below this estimated Jaccard are not near-duplicates (default 0.5, the LSH threshold). */
  minSimilarity?: number;
  canonical?: CanonicalRule;
  /** Date field for oldest/newest (default: <prefix>.annotated_at). */
  dateField?: string;
  /** Only signatures with these params; default: the one params value in the index (refused if several). */
  params?: string;
  /** Write every verified pair as a JSON line here. */
  pairsFile?: string;
  /** Signatures kept in memory at once (default 250,000, a few hundred MB); others are read again when needed. */
  maxCachedSignatures?: number;
  /** Keep each document's best matches (at most 10) for --format text. */
  collectMatches?: boolean;
  dryRun?: boolean;
  /** Multi-document band keys per partition (default 10,000): larger partitions read fewer documents twice. */
  bucketsPerPartition?: number;
  /** Band keys per query that reads the documents of a partition (default 10,000). */
  keysPerQuery?: number;
  /**
   * Documents of one band key verified at once (default 1,000). A key held by more is read on its own and
   * verified a chunk at a time, each chunk with representatives of the clusters found so far in that key.
   */
  bucketChunk?: number;
  errorsFile?: string;
  /** Where the last run is remembered, for incremental re-runs (default .near-dup/dedup-INDEX.json). */
  stateFile?: string;
  /** Continue a full run that was killed or stopped, from its last finished partition (see dedup-journal). */
  resume?: boolean;
  /** Documents per page of the scans that read a partition's members and the stale cluster fields (default 5,000). */
  pageSize?: number;
  /** Redo the whole index even when an earlier run's state allows an incremental one. */
  full?: boolean;
  bulk?: { maxBytes?: number; maxOperations?: number; concurrency?: number };
  onProgress?: (p: { stage: string; done: number; total?: number; elapsedSeconds: number }) => void;
}

export interface DedupPair {
  a: string;
  b: string;
  jaccard: number;
  hamming: number;
}

export interface DedupCluster {
  id: string;
  canonical: string;
  members: string[];
  maxSimilarity: Map<string, number>;
}

export interface DedupSummary {
  index: string;
  params: string;
  /** full: every bucket of the index; incremental: only what documents annotated since the last run touch. */
  mode: 'full' | 'incremental';
  /** Documents annotated since the last run (incremental mode). */
  newDocuments?: number;
  documents: number;
  buckets: number;
  candidatePairs: number;
  verifiedPairs: number;
  clusters: number;
  duplicates: number;
  largestCluster: number;
  cleared: number;
  written: number;
  failed: number;
  excludedParams: number;
  seconds: number;
  dryRun: boolean;
  /**
   * Every cluster field was written and the engine holds them: documents with a cluster_id are exactly
   * the members of the clusters (full mode), and nothing failed. Always false for a dry run.
   */
  complete: boolean;
  /** Partitions taken over from the killed run that --resume continued. */
  resumedPartitions: number;
  retries: RetrySnapshot;
  /** Peak resident memory of this process, MB. */
  peakMemoryMb: number;
  /** Largest clusters first, at most 20, for printing. */
  top: Array<{ cluster_id: string; size: number; canonical: string; members: string[] }>;
  /** Per document, its best matches (for --format text), only when asked for. */
  matches?: Map<string, Array<{ id: string; jaccard: number }>>;
  errorsFile?: string;
}

/** What verification needs of a document: about 1 KB, kept for the most recently used documents only. */
interface Signature {
  values: Uint32Array;
  simhash: string;
  /** A 32-bit hash of each band key, to tell whether two documents met in an earlier band. */
  bands: Int32Array;
}

/** What the clusters need of a document: a few bytes, kept for every document seen. */
interface Facts {
  tokens: number;
  sortKey: unknown;
  clusterId?: string;
}

/**
 * A Map that holds at most `capacity` entries and forgets the ones not used for longest: two generations,
 * each of half the capacity; a hit in the older one moves the entry to the newer one, and when the newer
 * one is full it becomes the older one. A hit in the newer generation costs one lookup and no write.
 */
export class RecentMap<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();
  private readonly half: number;
  constructor(capacity: number) {
    this.half = Math.max(1, Math.floor(capacity / 2));
  }
  get size(): number {
    return this.current.size + this.previous.size;
  }
  get(key: K): V | undefined {
    const value = this.current.get(key);
    if (value !== undefined) return value;
    const older = this.previous.get(key);
    if (older !== undefined) {
      this.previous.delete(key);
      this.set(key, older);
    }
    return older;
  }
  set(key: K, value: V): void {
    this.previous.delete(key);
    this.current.set(key, value);
    if (this.current.size >= this.half) {
      this.previous = this.current;
      this.current = new Map();
    }
  }
}

interface DedupState {
  index: string;
  params: string;
  minSimilarity: number;
  prefix: string;
  lastRunAt: string;
}

const MAX_BUCKET = 1000;
/** Clusters of one large band key carried from chunk to chunk, one representative each. */
const MAX_REPRESENTATIVES = 200;
/** Documents whose signatures are held together while their buckets are verified. */
const GROUP_DOCUMENTS = 5000;
/** Band keys per query that reads the documents of a partition. */
const KEYS_PER_QUERY = 10_000;
const MAX_PARTITIONS = 1 << 16;
/** Buckets up to this size are verified pair by pair; in larger ones, only pairs not already joined. */
const SMALL_BUCKET = 32;
/** Best matches kept per document for --format text. */
const MAX_MATCHES = 10;

/** Band keys held by two or more documents, with their counts, as a terms aggregation gives them. */
type PartitionKeys = Array<{ key: string; doc_count: number }>;

function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h;
}

export async function dedupIndex(client: EngineClient, options: DedupOptions): Promise<DedupSummary> {
  const started = performance.now();
  const retriesAtStart = client.retries.snapshot();
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const minSimilarity = options.minSimilarity ?? 0.5;
  if (!(minSimilarity > 0 && minSimilarity <= 1)) throw new UserError(`--min-similarity must be above 0 and at most 1, got ${minSimilarity}`);
  const f = (name: string) => `${prefix}.${name}`;
  const progress = (stage: string, done: number, total?: number) =>
    options.onProgress?.({ stage, done, total, elapsedSeconds: (performance.now() - started) / 1000 });

  try {
    await checkSortField(client, options.index, options.canonical, options.dateField, prefix);
    // Which signatures to compare: one params value, never a silent mix.
    const paramsAgg = await client.search(options.index, { size: 0, aggs: { params: { terms: { field: f('params'), size: 50 } } } });
    const paramsBuckets: Array<{ key: string; doc_count: number }> = paramsAgg.aggregations?.params?.buckets ?? [];
    if (paramsBuckets.length === 0) {
      throw new UserError(`no document of "${options.index}" has near-dup fields under "${prefix}"; run near-dup annotate --index ${options.index} --field FIELD first`);
    }
    let params = options.params;
    if (!params) {
      if (paramsBuckets.length > 1) {
        throw new UserError(
          `"${options.index}" holds signatures made with ${paramsBuckets.length} different parameter sets (${paramsBuckets
            .map((b) => `"${b.key}": ${b.doc_count} docs`)
            .join('; ')}); choose one with --params, or annotate again with one set of options`,
        );
      }
      params = paramsBuckets[0].key;
    }
    const excludedParams = paramsBuckets.filter((b) => b.key !== params).reduce((n, b) => n + b.doc_count, 0);
    const scope = { bool: { filter: [{ term: { [f('params')]: params } }, { range: { [f('token_count')]: { gt: 0 } } }] } };
    const documents = await client.count(options.index, scope);

    // 1. Buckets of two or more documents, partition by partition. Verified pairs are not kept in memory:
    // they go to the pairs file as they are found, into the union-find, and into per-document maxima.
    const uf = new UnionFind();
    // Signatures of the documents met recently (bounded: memory does not grow with the index), and the
    // few facts about every document met that clusters need.
    // (When the whole index fits, nothing is ever forgotten.)
    const cacheSize = options.maxCachedSignatures ?? 250_000;
    const everythingCached = documents <= cacheSize;
    const stored = new RecentMap<string, Signature>(everythingCached ? Number.POSITIVE_INFINITY : cacheSize);
    const facts = new Map<string, Facts>();
    const canonical = options.canonical ?? 'oldest';
    const sortField = canonical === 'longest' ? f('token_count') : typeof canonical === 'object' ? canonical.field : (options.dateField ?? f('annotated_at'));
    let buckets = 0;
    let candidatePairs = 0;
    let verifiedPairs = 0;
    const involved = new Set<string>();
    const bestMatch = new Map<string, number>();
    const matches = options.collectMatches ? new Map<string, Array<{ id: string; jaccard: number }>>() : undefined;
    const pairsOut = options.pairsFile ? createWriteStream(options.pairsFile) : undefined;

    /** The signatures of these documents: from the cache, the others read from the index (and cached). */
    const load = async (ids: string[]): Promise<Map<string, Signature>> => {
      const found = new Map<string, Signature>();
      const missing: string[] = [];
      for (const id of ids) {
        const signature = stored.get(id);
        if (signature) found.set(id, signature);
        else missing.push(id);
      }
      for (let i = 0; i < missing.length; i += 1000) {
        const chunk = missing.slice(i, i + 1000);
        const response = await client.search(options.index, {
          size: chunk.length,
          query: { bool: { filter: [scope, { ids: { values: chunk } }] } },
          _source: [f('minhash'), f('simhash'), f('token_count'), f('cluster_id'), f('bands'), sortField],
        });
        for (const hit of response.hits.hits) {
          const source = hit._source ?? {};
          const minhash = valueAt(source, f('minhash'));
          if (typeof minhash !== 'string') continue;
          const bands = (valueAt(source, f('bands')) as string[] | undefined) ?? [];
          const signature = {
            values: deserializeLeanMinhash(Buffer.from(minhash, 'base64')).values,
            simhash: String(valueAt(source, f('simhash')) ?? '0000000000000000'),
            bands: Int32Array.from(bands, keyHash),
          };
          stored.set(hit._id, signature);
          found.set(hit._id, signature);
          facts.set(hit._id, {
            tokens: Number(valueAt(source, f('token_count')) ?? 0),
            sortKey: valueAt(source, sortField),
            clusterId: (valueAt(source, f('cluster_id')) as string | null | undefined) ?? undefined,
          });
        }
      }
      return found;
    };

    /** The most MinHash values out of `length` in which a pair that passes verification can differ. */
    const maxDistance = (length: number): number => {
      let d = 0;
      while (d < length && (length - d - 1) / length >= minSimilarity) d++;
      return d;
    };

    let journal: DedupJournal | undefined;
    /** Verifies one pair; a verified pair joins the two documents and is reported. */
    const verify = (x: string, y: string, signatures: Map<string, Signature>): boolean => {
      const a = signatures.get(x)!, b = signatures.get(y)!;
      candidatePairs++;
      const jaccard = minhashJaccard(a.values, b.values);
      if (jaccard < minSimilarity) return false;
      verifiedPairs++;
      const [p, q] = x < y ? [x, y] : [y, x];
      const pair = { a: p, b: q, jaccard, hamming: hammingDistance(a.simhash, b.simhash) };
      journal?.add(pair);
      recordPair(pair);
      return true;
    };

    /** A verified pair joins its documents, counts for their best similarity, and is reported. */
    const recordPair = ({ a: p, b: q, jaccard, hamming }: JournalPair): void => {
      pairsOut?.write(JSON.stringify({ a: p, b: q, jaccard, hamming }) + '\n');
      for (const [id, other] of [[p, q], [q, p]]) {
        bestMatch.set(id, Math.max(bestMatch.get(id) ?? 0, jaccard));
        involved.add(id);
        if (matches) {
          const list = matches.get(id) ?? [];
          list.push({ id: other, jaccard });
          list.sort((m, n) => n.jaccard - m.jaccard || (m.id < n.id ? -1 : 1));
          matches.set(id, list.slice(0, MAX_MATCHES));
        }
      }
      uf.union(p, q);
    };

    /**
     * The 32-bit hashes of the band keys held by more documents than one bucket verifies at once, by band
     * (found before any bucket is verified): such a key is verified a chunk at a time, which can leave a
     * pair of its documents untried, so it does not count as having decided them.
     */
    const largeKeys = new Map<number, Set<number>>();
    /**
     * Whether an earlier bucket of two documents decided them: 'yes' when they share a band key before
     * `band` (that bucket tried them), 'large' when the only ones they share before it are large keys
     * (which may not have), 'no' when they share none.
     */
    const decidedEarlier = (x: string, y: string, band: number | undefined, signatures: Map<string, Signature>): 'yes' | 'large' | 'no' => {
      if (band === undefined) return 'no';
      const a = signatures.get(x)!.bands, b = signatures.get(y)!.bands;
      let shared: 'large' | 'no' = 'no';
      for (let j = 0; j < band && j < a.length && j < b.length; j++) {
        if (a[j] !== b[j]) continue;
        if (!largeKeys.get(j)?.has(a[j])) return 'yes';
        shared = 'large';
      }
      return shared;
    };

    /**
     * Verifies the documents of one bucket: every pair in a small bucket. In a large one, pairs of
     * documents not yet in one cluster, until their clusters join (joinBucket): a bucket of n
     * near-identical documents costs about n comparisons, and no pair that would join two clusters goes
     * unverified, whatever the order of the members. With `anchor`, only the pairs that include it.
     */
    const verifyBucket = async (ids: string[], options: { anchor?: string; band?: number; signatures?: Map<string, Signature> } = {}) => {
      buckets++;
      // The bucket's signatures stay at hand until it is done, whatever the cache forgets meanwhile.
      const signatures = options.signatures ?? (await load(ids));
      const present = ids.filter((id) => signatures.has(id));
      if (options.anchor !== undefined) {
        if (!signatures.has(options.anchor)) return;
        for (const id of present) if (id !== options.anchor) verify(options.anchor, id, signatures);
        return;
      }
      const band = options.band;
      const n = present.length;
      if (n <= SMALL_BUCKET) {
        for (let i = 0; i < n; i++) {
          for (let j = i + 1; j < n; j++) {
            // A pair that met in a large key is verified here unless that key already joined it (so that
            // no pair is reported twice).
            const decided = decidedEarlier(present[i], present[j], band, signatures);
            if (decided === 'no' || (decided === 'large' && uf.find(present[i]) !== uf.find(present[j]))) verify(present[i], present[j], signatures);
          }
        }
        return;
      }
      // Signatures of another length cannot be compared (minhashJaccard refuses them): left out.
      const length = signatures.get(present[0])!.values.length;
      const members = present.filter((id) => signatures.get(id)!.values.length === length);
      joinBucket(
        members.map((id) => signatures.get(id)!.values),
        members.map((id) => uf.find(id)),
        maxDistance(length),
        (i, j) => decidedEarlier(members[i], members[j], band, signatures) !== 'yes' && verify(members[i], members[j], signatures),
      );
    };

    const stateFile = options.stateFile ?? defaultCheckpointPath('dedup', options.index);
    const runStartedAt = new Date().toISOString();
    const saved = options.full || options.resume ? undefined : ((await readCheckpoint(stateFile))?.identity as DedupState | undefined);
    const incremental =
      saved !== undefined && saved.params === params && saved.minSimilarity === minSimilarity && saved.prefix === prefix && saved.index === options.index;
    // Documents whose cluster fields this run decides; in full mode, every document (stale ones are found by a scan).
    let decided: Set<string> | undefined;
    let newDocuments: number | undefined;
    let resumedPartitions = 0;

    if (!incremental) {
      // Exact duplicates have equal signatures, so they share every band key: the band buckets hold them too.
      const field = f('bands');
      const perPartition = options.bucketsPerPartition ?? 10_000;
      const maxBucket = Math.max(4, options.bucketChunk ?? MAX_BUCKET);
      const maxRepresentatives = Math.min(MAX_REPRESENTATIVES, Math.floor(maxBucket / 2));

      /**
       * The keys held by two or more documents in one partition of the band keys. Cheap for the engine: a
       * terms aggregation without sub-aggregations. null when the partition holds more keys than one
       * response carries, or more than the engine's memory allows (circuit breaker).
       */
      const partitionKeys = async (partition: number, partitions: number, minDocCount = 2): Promise<PartitionKeys | null> => {
        try {
          const response = await client.search(options.index, {
            size: 0,
            query: scope,
            aggs: { keys: { terms: { field, include: { partition, num_partitions: partitions }, min_doc_count: minDocCount, size: perPartition } } },
          });
          const agg = response.aggregations?.keys;
          const list = agg?.buckets ?? [];
          return list.length >= perPartition && (agg?.sum_other_doc_count ?? 0) > 0 ? null : list;
        } catch (err) {
          if (err instanceof EngineResponseError && err.statusCode === 429 && partitions < MAX_PARTITIONS) return null;
          throw err;
        }
      };

      /**
       * A key held by more documents than one bucket verifies at once (boilerplate, a template, thousands
       * of copies of one text): its documents are read on their own, in index order, and verified a chunk
       * at a time, each chunk together with one representative of every cluster found so far in this key
       * (up to 200). Copies and near-copies of any number join one cluster; two documents of different
       * chunks that match neither's representative are left to their other keys (see decidedEarlier).
       */
      const verifyLargeKey = async (key: string) => {
        const band = Number.parseInt(key, 10);
        let representatives: string[] = [];
        let chunk: string[] = [];
        const verifyChunk = async () => {
          const ids = [...representatives, ...chunk];
          await verifyBucket(ids, { band });
          const byCluster = new Map<string, string>();
          for (const id of ids) {
            const root = uf.find(id);
            if (!byCluster.has(root)) byCluster.set(root, id);
          }
          // Clusters before single documents (which may still match something later), each in the order met.
          const found = [...byCluster.values()];
          representatives = [...found.filter((id) => uf.sizeOf(id) > 1), ...found.filter((id) => uf.sizeOf(id) === 1)].slice(0, maxRepresentatives);
          chunk = [];
        };
        for await (const page of scanIndex(client, {
          index: options.index,
          query: { bool: { filter: [scope, { term: { [field]: key } }] } },
          sourceIncludes: [],
          pageSize: maxBucket,
          pointInTime: client.pointInTime,
        })) {
          for (const hit of page) {
            chunk.push(hit._id);
            if (representatives.length + chunk.length >= maxBucket) await verifyChunk();
          }
        }
        if (chunk.length > 0) await verifyChunk();
      };

      /**
       * The buckets of one partition: every document that holds one of its keys is read once (its id and
       * band keys, from doc values), sorted into the buckets of the keys it holds, and each bucket is
       * verified. A key held by more documents than one bucket verifies at once goes to verifyLargeKey.
       */
      const processPartition = async (keys: PartitionKeys) => {
        const members = new Map<string, string[]>();
        const small = keys.filter((k) => k.doc_count <= maxBucket).map((k) => k.key);
        const perQuery = options.keysPerQuery ?? KEYS_PER_QUERY;
        for (let i = 0; i < small.length; i += perQuery) {
          // A document is sorted only into the keys of the query that found it, so none is counted twice.
          const chunk = small.slice(i, i + perQuery);
          const inChunk = new Set(chunk);
          const byBand: Array<Map<number, string>> = [];
          for (const key of chunk) {
            members.set(key, []);
            (byBand[Number.parseInt(key, 10)] ??= new Map()).set(keyHash(key), key);
          }
          for await (const page of scanIndex(client, {
            index: options.index,
            query: { bool: { filter: [scope, { terms: { [field]: chunk } }] } },
            sourceIncludes: [],
            // When every signature stays in the cache, a document's band keys come from there (read from the
            // index once); otherwise from doc values, with each page, so that nothing is read twice.
            docvalueFields: everythingCached ? [] : [field],
            pageSize: options.pageSize ?? 5000,
            pointInTime: client.pointInTime,
          })) {
            if (everythingCached) {
              // By a 32-bit hash of the key: a document met through another key with the same hash is only
              // one more pair to verify; the verification decides.
              for (const [id, signature] of await load(page.map((hit) => hit._id))) {
                signature.bands.forEach((hash, band) => {
                  const key = byBand[band]?.get(hash);
                  if (key !== undefined) members.get(key)!.push(id);
                });
              }
            } else {
              for (const hit of page) {
                for (const key of (hit.fields?.[field] ?? []) as string[]) if (inChunk.has(key)) members.get(key)!.push(hit._id);
              }
            }
          }
        }
        // The buckets are verified a group at a time, with the signatures of a whole group read at once (what
        // the cache no longer holds costs one request per thousand documents, not one per bucket).
        let group: Array<{ ids: string[]; band: number }> = [];
        let groupIds = new Set<string>();
        const verifyGroup = async () => {
          const signatures = await load([...groupIds]);
          for (const bucket of group) await verifyBucket(bucket.ids, { band: bucket.band, signatures });
          group = [];
          groupIds = new Set();
        };
        for (const { key, doc_count } of keys) {
          if (doc_count > maxBucket) {
            await verifyLargeKey(key);
            continue;
          }
          const ids = members.get(key)!;
          members.delete(key);
          if (ids.length < 2) continue; // signed again meanwhile
          group.push({ ids, band: Number.parseInt(key, 10) });
          for (const id of ids) groupIds.add(id);
          if (groupIds.size >= GROUP_DOCUMENTS) await verifyGroup();
        }
        await verifyGroup();
      };

      // How many partitions: each one reads the documents of its keys once, so fewer, fuller partitions
      // read less; the first partition (the engine spreads keys over partitions by hash) tells how full.
      const cardinality = await client.search(options.index, { size: 0, query: scope, aggs: { keys: { cardinality: { field } } } });
      const distinct: number = cardinality.aggregations?.keys?.value ?? 0;
      let partitions = Math.max(1, Math.ceil(distinct / (perPartition * 20)));
      let first: PartitionKeys | null | undefined;
      let startAt = 0;
      const identity = { index: options.index, params, prefix, minSimilarity, bucketsPerPartition: perPartition, bucketChunk: maxBucket };
      const runFile = `${stateFile.replace(/\.json$/, '')}.run.json`;
      if (options.resume && !options.dryRun) {
        // The plan of the killed run, and every pair it had verified up to its last finished partition.
        const saved = (await readCheckpoint(runFile))?.identity as { partitions?: number } | undefined;
        const resumed = await DedupJournal.resume(runFile, { ...identity, partitions: saved?.partitions ?? -1 });
        journal = resumed.journal;
        partitions = saved!.partitions!;
        startAt = journal.partitionsDone;
        for (const pair of resumed.pairs) recordPair(pair);
        ({ buckets, candidatePairs, verifiedPairs } = journal.counters);
      } else {
        first = await partitionKeys(0, partitions);
        while (first === null && partitions < MAX_PARTITIONS) first = await partitionKeys(0, (partitions *= 4));
        if (first !== null && partitions > 1 && first.length < perPartition / 4) {
          const fewer = Math.max(1, Math.ceil((partitions * first.length) / (perPartition * 0.6)));
          const probe = await partitionKeys(0, fewer);
          if (probe !== null) [partitions, first] = [fewer, probe];
        }
        if (!options.dryRun) journal = await DedupJournal.start(runFile, { ...identity, partitions });
      }
      resumedPartitions = startAt;
      /**
       * Hands the keys of one partition (held by at least `minDocCount` documents) to `handle`. Partition
       * p of P is partitions p, p + P, p + 2P and p + 3P of 4P (the engine takes the key's hash modulo the
       * count): a partition too full is split where it stands, without starting over. `fetched`: its keys,
       * when already asked for.
       */
      const eachPartition = async (partition: number, count: number, minDocCount: number, handle: (keys: PartitionKeys) => Promise<void> | void, fetched?: PartitionKeys | null): Promise<void> => {
        const keys = fetched === undefined ? await partitionKeys(partition, count, minDocCount) : fetched;
        if (keys !== null) return handle(keys);
        if (count >= MAX_PARTITIONS) throw new UserError(`the band keys of "${options.index}" do not fit ${MAX_PARTITIONS} partitions of ${perPartition} keys`);
        for (let k = 0; k < 4; k++) await eachPartition(partition + k * count, count * 4, minDocCount, handle);
      };
      // First the large keys, all of them (an aggregation per partition, no documents read).
      for (let p = 0; p < partitions; p++) {
        await eachPartition(p, partitions, maxBucket + 1, (keys) => {
          for (const { key } of keys) {
            const band = Number.parseInt(key, 10);
            let hashes = largeKeys.get(band);
            if (!hashes) largeKeys.set(band, (hashes = new Set()));
            hashes.add(keyHash(key));
          }
        });
      }
      for (let p = startAt; p < partitions; p++) {
        await eachPartition(p, partitions, 2, processPartition, p === 0 ? first : undefined);
        await journal?.checkpoint(p + 1, { buckets, candidatePairs, verifiedPairs });
        progress(`buckets of ${field}`, p + 1, partitions);
      }
    } else {
      // Only the neighbourhood of what was annotated since the last run: the new documents, the documents
      // that share a band key or content hash with them, and every member of the clusters these touch.
      const fresh: string[] = [];
      for await (const page of scanIndex(client, {
        index: options.index,
        query: { bool: { filter: [scope, { range: { [f('annotated_at')]: { gt: saved.lastRunAt } } }] } },
        sourceIncludes: [f('bands'), f('content_hash')],
        pointInTime: client.pointInTime,
      })) {
        for (const hit of page) {
          fresh.push(hit._id);
          const keys = [...((valueAt(hit._source, f('bands')) as string[] | undefined) ?? [])];
          const response = await client.search(options.index, {
            size: MAX_BUCKET,
            _source: false,
            query: {
              bool: {
                filter: [scope],
                should: [{ terms: { [f('bands')]: keys } }, { term: { [f('content_hash')]: String(valueAt(hit._source, f('content_hash'))) } }],
                minimum_should_match: 1,
              },
            },
          });
          await verifyBucket([hit._id, ...response.hits.hits.map((h) => h._id)], { anchor: hit._id });
        }
        progress('new documents', fresh.length);
      }
      newDocuments = fresh.length;
      // Members of every cluster the new documents were in, or now join.
      decided = new Set([...fresh, ...involved]);
      await load([...decided]);
      const clusterIds = new Set([...decided].map((id) => facts.get(id)?.clusterId).filter((c): c is string => Boolean(c)));
      for (const ids of chunks([...clusterIds], 500)) {
        for await (const page of scanIndex(client, {
          index: options.index,
          query: { terms: { [f('cluster_id')]: ids } },
          sourceIncludes: [],
          pointInTime: client.pointInTime,
        })) {
          for (const hit of page) decided.add(hit._id);
        }
      }
      // Re-verify the whole neighbourhood, so a document that changed can also split its old cluster.
      await verifyBucket([...decided]);
    }

    // 2. Clusters, their canonical document and the fields to write. (Pairs replayed by --resume bring
    // documents whose facts were never read in this process.)
    await load([...involved].filter((id) => !facts.has(id)));
    const clusters: DedupCluster[] = [];
    for (const members of uf.groups()) {
      members.sort();
      const chosen = pickCanonical(members, facts, canonical);
      clusters.push({ id: chosen, canonical: chosen, members, maxSimilarity: new Map(members.map((m) => [m, bestMatch.get(m) ?? 0])) });
    }
    clusters.sort((a, b) => b.members.length - a.members.length || (a.id < b.id ? -1 : 1));

    if (pairsOut) await new Promise<void>((resolve, reject) => pairsOut.end((err?: Error | null) => (err ? reject(err) : resolve())));

    // 3. Write back, and clear documents that are no longer in any cluster.
    const errors = ErrorsFile.forIndex(options.index, options.errorsFile);
    let written = 0, failed = 0, cleared = 0;
    let complete = false;
    const inCluster = new Set(clusters.flatMap((c) => c.members));
    if (!options.dryRun) {
      const writer = new BulkWriter({
        send: (ndjson) => client.bulkNdjson(ndjson),
        ...options.bulk,
        retries: client.retries,
        onSuccess: () => written++,
        onFailure: (op, reason, status) => {
          failed++;
          errors.add({ id: op.id, status, reason });
        },
      });
      const update = (id: string, fields: Record<string, unknown>) =>
        writer.add({ id, action: { update: { _index: options.index, _id: id } }, body: { doc: underPrefix(prefix, fields) } });
      for (const cluster of clusters) {
        for (const member of cluster.members) {
          await update(member, {
            cluster_id: cluster.id,
            duplicate_of: member === cluster.canonical ? null : cluster.canonical,
            is_canonical: member === cluster.canonical,
            cluster_size: cluster.members.length,
            max_similarity: cluster.maxSimilarity.get(member) ?? 0,
          });
        }
      }
      // Cluster fields left from an earlier run on documents that are in no cluster now.
      const clear = async (id: string) => {
        if (inCluster.has(id)) return;
        cleared++;
        await update(id, { cluster_id: null, duplicate_of: null, is_canonical: null, cluster_size: null, max_similarity: null });
      };
      if (decided) {
        for (const id of decided) if (facts.get(id)?.clusterId) await clear(id);
      } else {
        for await (const page of scanIndex(client, {
          index: options.index,
          query: { exists: { field: f('cluster_id') } },
          sourceIncludes: [],
          pageSize: options.pageSize ?? 5000,
          pointInTime: client.pointInTime,
        })) {
          for (const hit of page) await clear(hit._id);
        }
      }
      await writer.flush();
      await client.refresh(options.index);
      // Checked with the engine: the documents holding a cluster_id are exactly the clusters' members.
      const holding = decided ? inCluster.size : await client.count(options.index, { exists: { field: f('cluster_id') } });
      complete = failed === 0 && holding === inCluster.size;
      if (holding !== inCluster.size) {
        errors.add({ reason: `after the write-back ${holding} documents hold a cluster_id, but the clusters have ${inCluster.size} members; run dedup --full again` });
      }
    }
    await errors.close();
    if (complete) await journal?.finish();
    if (complete) {
      const identity: DedupState = { index: options.index, params, minSimilarity, prefix, lastRunAt: runStartedAt };
      await writeCheckpoint(stateFile, { job: 'dedup', index: options.index, identity: identity as unknown as Record<string, unknown>, startedAt: runStartedAt, updatedAt: new Date().toISOString(), complete: true, counts: {} });
    }

    return {
      index: options.index,
      params,
      mode: incremental ? 'incremental' : 'full',
      newDocuments,
      documents,
      buckets,
      candidatePairs,
      verifiedPairs,
      clusters: clusters.length,
      duplicates: clusters.reduce((n, c) => n + c.members.length - 1, 0),
      largestCluster: clusters[0]?.members.length ?? 0,
      cleared,
      written,
      failed,
      excludedParams,
      seconds: (performance.now() - started) / 1000,
      dryRun: options.dryRun ?? false,
      complete,
      resumedPartitions,
      retries: client.retries.since(retriesAtStart),
      peakMemoryMb: Math.round(process.resourceUsage().maxRSS / 1024),
      top: clusters.slice(0, 20).map((c) => ({ cluster_id: c.id, size: c.members.length, canonical: c.canonical, members: c.members.slice(0, 10) })),
      matches,
      errorsFile: errors.count > 0 ? errors.file : undefined,
    };
  } catch (err) {
    throw client.explain(err, options.index);
  }
}

/** A canonical field or date field that the mapping does not have is a typo (`--canonical longst`), not a field. */
async function checkSortField(client: EngineClient, index: string, canonical: CanonicalRule | undefined, dateField: string | undefined, prefix: string): Promise<void> {
  const named = [typeof canonical === 'object' ? { option: '--canonical', field: canonical.field } : undefined, dateField ? { option: '--date-field', field: dateField } : undefined].filter(
    (x): x is { option: string; field: string } => x !== undefined,
  );
  if (named.length === 0) return;
  const mappings = await client.getMapping(index);
  for (const { option, field } of named) {
    if (absentFields(mappings, [field]).length === 0) continue;
    const known = [...new Set(Object.values(mappings).flatMap((m) => mappedFields(m.mappings)))].filter((f) => !f.startsWith(`${prefix}.`) && f !== prefix).sort();
    const rules = option === '--canonical' ? 'oldest, newest, longest, a field (lowest first) or -field (highest first)' : 'a date field';
    throw new UsageError(
      `${option} "${field}" is not a field of "${index}"; give ${rules}. Its fields: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', ...' : ''}`,
    );
  }
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** All documents holding one key, for the rare bucket larger than top_hits returns. */
function pickCanonical(members: string[], facts: Map<string, Facts>, rule: CanonicalRule): string {
  const key = (id: string) => facts.get(id)?.sortKey;
  const tokens = (id: string) => facts.get(id)?.tokens ?? 0;
  const compare = (a: unknown, b: unknown) => {
    if (a === b) return 0;
    if (a === undefined || a === null) return 1;
    if (b === undefined || b === null) return -1;
    const x = typeof a === 'string' && !Number.isNaN(Date.parse(a)) && typeof b === 'string' ? Date.parse(a) : a;
    const y = typeof b === 'string' && !Number.isNaN(Date.parse(b)) && typeof a === 'string' ? Date.parse(b) : b;
    return (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
  };
  const sorted = [...members].sort((a, b) => {
    let order: number;
    if (rule === 'longest') order = tokens(b) - tokens(a);
    else if (rule === 'newest') order = -compare(key(a), key(b)) || 0;
    else if (rule === 'oldest') order = compare(key(a), key(b));
    else order = rule.order === 'asc' ? compare(key(a), key(b)) : -compare(key(a), key(b));
    return order || (a < b ? -1 : a > b ? 1 : 0);
  });
  return sorted[0];
}

