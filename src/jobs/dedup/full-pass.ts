// The full pass of dedup: every LSH bucket of two or more documents in the index, partition by partition.
//  - Large keys first (held by more documents than one bucket verifies at once): an aggregation per
//    partition, no documents read, so that every bucket knows which earlier keys may not have decided a pair.
//  - Then each partition: the documents of its keys are read once each (a scan with a terms query: ids,
//    and band keys from the signature cache or from doc values), sorted into their buckets, and the buckets
//    verified a group at a time (the signatures of a whole group read at once).
//  - A large key is read on its own and verified a chunk at a time, each chunk with one representative of
//    every cluster found so far in that key.
// Each finished partition is journaled with its verified pairs, so that --resume goes on from there.
import type { EngineClient } from '../../engine/client.js';
import { EngineResponseError } from '../../engine/errors.js';
import { scanIndex } from '../../engine/scan.js';
import { UserError } from '../../errors.js';
import { DedupJournal } from './journal.js';
import type { PairVerifier } from './pair-verifier.js';
import { eachPartition, type KeysOfPartition, MAX_PARTITIONS, type PartitionKeys, planPartitions, TooManyKeysError } from './partitions.js';
import { keyHash, type SignatureStore } from './signature-store.js';

/** Clusters of one large band key carried from chunk to chunk, one representative each. */
const MAX_REPRESENTATIVES = 200;
/** Documents whose signatures are held together while their buckets are verified. */
const SIGNATURES_PER_GROUP = 5000;

export interface FullPassSettings {
  index: string;
  prefix: string;
  params: string;
  minSimilarity: number;
  /** The documents compared: this params value, at least one token. */
  scope: Record<string, unknown>;
  /** Multi-document band keys per partition. */
  bucketsPerPartition: number;
  /** Documents of one band key verified at once; a key held by more is a large key. */
  bucketChunk: number;
  /** Band keys per query that reads the documents of a partition. */
  keysPerQuery: number;
  /** Documents per scan page. */
  pageSize: number;
  /** Whether every signature stays in the cache (then band keys come from there, not from doc values). */
  everythingCached: boolean;
  /** Where the journal lives (--resume), or undefined for a dry run (nothing to resume). */
  journalFile?: string;
  resume: boolean;
  onPartition?: (done: number, total: number) => void;
}

export class FullPass {
  private readonly field: string;
  /** Partitions taken over from the interrupted run that --resume continues. */
  resumedPartitions = 0;

  constructor(
    private readonly client: EngineClient,
    private readonly store: SignatureStore,
    private readonly verifier: PairVerifier,
    private readonly settings: FullPassSettings,
  ) {
    this.field = `${settings.prefix}.bands`;
  }

  async run(): Promise<void> {
    const { partitions, first, startAt, journal } = await this.plan();
    this.resumedPartitions = startAt;
    this.journal = journal;
    try {
      await this.findLargeKeys(partitions);
      for (let p = startAt; p < partitions; p++) {
        await eachPartition(this.keysOf, p, partitions, 2, (keys) => this.processPartition(keys), p === 0 ? first : undefined);
        const { buckets, candidatePairs, verifiedPairs } = this.verifier;
        await journal?.checkpoint(p + 1, { buckets, candidatePairs, verifiedPairs });
        this.settings.onPartition?.(p + 1, partitions);
      }
    } catch (err) {
      if (err instanceof TooManyKeysError) throw new UserError(`the band keys of "${this.settings.index}" do not fit ${MAX_PARTITIONS} partitions of ${this.settings.bucketsPerPartition} keys`);
      throw err;
    }
  }

  /** The journal of this run: verified pairs go in as they are found; closed once the clusters are written. */
  journal?: DedupJournal;

  /** How many partitions, and where to start: from the beginning, or (--resume) where the killed run stopped. */
  private async plan(): Promise<{ partitions: number; first?: PartitionKeys | null; startAt: number; journal?: DedupJournal }> {
    const { index, params, prefix, minSimilarity, bucketsPerPartition, bucketChunk, journalFile } = this.settings;
    const identity = { index, params, prefix, minSimilarity, bucketsPerPartition, bucketChunk };
    if (this.settings.resume && journalFile) {
      const { journal, pairs, partitions } = await DedupJournal.resume(journalFile, identity);
      for (const pair of pairs) this.verifier.record(pair);
      Object.assign(this.verifier, journal.counters);
      return { partitions, startAt: journal.partitionsDone, journal };
    }
    const cardinality = await this.client.search(index, { size: 0, query: this.settings.scope, aggs: { keys: { cardinality: { field: this.field } } } });
    const { partitions, first } = await planPartitions(this.keysOf, cardinality.aggregations?.keys?.value ?? 0, bucketsPerPartition);
    const journal = journalFile ? await DedupJournal.start(journalFile, { ...identity, partitions }) : undefined;
    return { partitions, first, startAt: 0, journal };
  }

  /**
   * The keys held by `minDocCount` or more documents in one partition: a terms aggregation without
   * sub-aggregations, cheap for the engine. null when the partition holds more keys than one answer
   * carries, or more than the engine's memory allows (circuit breaker).
   */
  private readonly keysOf: KeysOfPartition = async (partition, partitions, minDocCount) => {
    const size = this.settings.bucketsPerPartition;
    try {
      const response = await this.client.search(this.settings.index, {
        size: 0,
        query: this.settings.scope,
        aggs: { keys: { terms: { field: this.field, include: { partition, num_partitions: partitions }, min_doc_count: minDocCount, size } } },
      });
      const agg = response.aggregations?.keys;
      const list: PartitionKeys = agg?.buckets ?? [];
      return list.length >= size && (agg?.sum_other_doc_count ?? 0) > 0 ? null : list;
    } catch (err) {
      if (err instanceof EngineResponseError && err.statusCode === 429 && partitions < MAX_PARTITIONS) return null;
      throw err;
    }
  };

  /** Every large key, before any bucket is verified (an aggregation per partition, no documents read). */
  private async findLargeKeys(partitions: number): Promise<void> {
    for (let p = 0; p < partitions; p++) {
      await eachPartition(this.keysOf, p, partitions, this.settings.bucketChunk + 1, (keys) => {
        for (const { key } of keys) this.verifier.markLargeKey(Number.parseInt(key, 10), keyHash(key));
      });
    }
  }

  /** The buckets of one partition: members read once, then verified a group at a time; large keys on their own. */
  private async processPartition(keys: PartitionKeys): Promise<void> {
    const members = await this.readMembers(keys.filter((k) => k.doc_count <= this.settings.bucketChunk).map((k) => k.key));
    let group: Array<{ ids: string[]; band: number }> = [];
    let groupIds = new Set<string>();
    const verifyGroup = async () => {
      const signatures = await this.store.load([...groupIds]);
      for (const bucket of group) this.verifier.verifyBucket(bucket.ids, signatures, { band: bucket.band });
      group = [];
      groupIds = new Set();
    };
    for (const { key, doc_count } of keys) {
      if (doc_count > this.settings.bucketChunk) {
        await this.verifyLargeKey(key);
        continue;
      }
      const ids = members.get(key)!;
      members.delete(key);
      if (ids.length < 2) continue; // signed again meanwhile
      group.push({ ids, band: Number.parseInt(key, 10) });
      for (const id of ids) groupIds.add(id);
      if (groupIds.size >= SIGNATURES_PER_GROUP) await verifyGroup();
    }
    await verifyGroup();
  }

  /**
   * The documents of each key, read `keysPerQuery` keys at a time. A document is sorted only into the keys
   * of the query that found it, so none is counted twice.
   */
  private async readMembers(keys: string[]): Promise<Map<string, string[]>> {
    const members = new Map<string, string[]>();
    for (let i = 0; i < keys.length; i += this.settings.keysPerQuery) {
      const chunk = keys.slice(i, i + this.settings.keysPerQuery);
      const inChunk = new Set(chunk);
      const byBand: Array<Map<number, string>> = [];
      for (const key of chunk) {
        members.set(key, []);
        (byBand[Number.parseInt(key, 10)] ??= new Map()).set(keyHash(key), key);
      }
      const cached = this.settings.everythingCached;
      for await (const page of scanIndex(this.client, {
        index: this.settings.index,
        query: { bool: { filter: [this.settings.scope, { terms: { [this.field]: chunk } }] } },
        sourceIncludes: [],
        // When every signature stays in the cache, a document's band keys come from there (read from the
        // index once); otherwise from doc values, with each page, so that nothing is read twice.
        docvalueFields: cached ? [] : [this.field],
        pageSize: this.settings.pageSize,
        pointInTime: this.client.pointInTime,
      })) {
        if (cached) {
          // By a 32-bit hash of the key: a document met through another key with the same hash is only one
          // more pair to verify; the verification decides.
          for (const [id, signature] of await this.store.load(page.map((hit) => hit._id))) {
            signature.bands.forEach((hash, band) => {
              const key = byBand[band]?.get(hash);
              if (key !== undefined) members.get(key)!.push(id);
            });
          }
        } else {
          for (const hit of page) {
            for (const key of (hit.fields?.[this.field] ?? []) as string[]) if (inChunk.has(key)) members.get(key)!.push(hit._id);
          }
        }
      }
    }
    return members;
  }

  /**
   * A key held by more documents than one bucket verifies at once (boilerplate, a template, thousands of
   * copies of one text): its documents are read on their own, in index order, and verified a chunk at a
   * time, each chunk together with one representative of every cluster found so far in this key (up to
   * 200). Copies and near-copies of any number join one cluster; two documents of different chunks that
   * match neither's representative are left to their other keys (see PairVerifier.decidedEarlier).
   */
  private async verifyLargeKey(key: string): Promise<void> {
    const band = Number.parseInt(key, 10);
    const chunkSize = this.settings.bucketChunk;
    const maxRepresentatives = Math.min(MAX_REPRESENTATIVES, Math.floor(chunkSize / 2));
    const clusters = this.verifier.clusters;
    let representatives: string[] = [];
    let chunk: string[] = [];
    const verifyChunk = async () => {
      const ids = [...representatives, ...chunk];
      this.verifier.verifyBucket(ids, await this.store.load(ids), { band });
      const byCluster = new Map<string, string>();
      for (const id of ids) {
        const root = clusters.find(id);
        if (!byCluster.has(root)) byCluster.set(root, id);
      }
      // Clusters before single documents (which may still match something later), each in the order met.
      const found = [...byCluster.values()];
      representatives = [...found.filter((id) => clusters.sizeOf(id) > 1), ...found.filter((id) => clusters.sizeOf(id) === 1)].slice(0, maxRepresentatives);
      chunk = [];
    };
    for await (const page of scanIndex(this.client, {
      index: this.settings.index,
      query: { bool: { filter: [this.settings.scope, { term: { [this.field]: key } }] } },
      sourceIncludes: [],
      pageSize: chunkSize,
      pointInTime: this.client.pointInTime,
    })) {
      for (const hit of page) {
        chunk.push(hit._id);
        if (representatives.length + chunk.length >= chunkSize) await verifyChunk();
      }
    }
    if (chunk.length > 0) await verifyChunk();
  }
}
