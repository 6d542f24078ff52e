// The full pass of dedup: every LSH bucket of two or more documents in the index. When every signature
// fits in memory, the index is read once and bucketed here (dedup/memory-pass.ts); otherwise the engine
// finds the buckets, partition by partition:
//  - Large keys first (held by more documents than one bucket verifies at once): an aggregation per
//    partition, no documents read, so that every bucket knows which earlier keys may not have decided a pair.
//  - Then each partition: the documents of its keys are read once each (a scan with a terms query: ids,
//    and band keys from doc values), sorted into their buckets, and the buckets verified a group at a time
//    (the signatures of a whole group read at once).
//  - A large key is read on its own and verified a chunk at a time, each chunk with one representative of
//    every cluster found so far in that key.
// Each finished partition (or band, in memory) is journaled with its verified pairs, so that --resume goes
// on from there.
import { storedPath } from '../../stored/layout.js';
import type { EngineClient } from '../../engine/client.js';
import { EngineResponseError } from '../../engine/errors.js';
import { scanIndex } from '../../engine/scan.js';
import { UserError } from '../../errors.js';
import type { SignatureSource } from './cluster-cut.js';
import type { DocNumbers } from './doc-numbers.js';
import { DedupJournal, type DedupRunIdentity } from './journal.js';
import { LargeKeyJoin } from './large-key.js';
import { readPool, verifyBand } from './memory-pass.js';
import type { SignaturePool } from './signature-pool.js';
import type { PairVerifier } from './pair-verifier.js';
import { eachPartition, type KeysOfPartition, MAX_PARTITIONS, type PartitionKeys, planPartitions, TooManyKeysError } from './partitions.js';
import { keyHash, type SignatureStore, type StoredSignature } from './signature-store.js';

/** Documents whose signatures are held together while their buckets are verified. */
const SIGNATURES_PER_GROUP = 5000;

export interface FullPassSettings {
  index: string;
  /** The uuids of the concrete indices read: a journal of another index (or one made anew) is not resumed. */
  uuids: string[];
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
  /** Whether every signature fits in memory: then the index is read once and bucketed here. */
  everythingCached: boolean;
  /** The stored fields a signature and its facts come from (for the pass in memory). */
  storedFields: string[];
  /** Documents in scope. */
  documents: number;
  /** The numbering shared with the store and the verifier (to find a signature in memory by id). */
  numbers?: DocNumbers;
  /** Where the journal lives (--resume), or undefined for a dry run (nothing to resume). */
  journalFile?: string;
  resume: boolean;
  /** Partitions done; in memory, signatures read, then bands done. */
  onProgress?: (stage: 'buckets' | 'signatures' | 'bands', done: number, total: number) => void;
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
    this.field = storedPath(settings.prefix, 'bands');
  }

  async run(): Promise<void> {
    if (this.settings.everythingCached) return this.runInMemory();
    const { partitions, first, startAt, journal } = await this.plan();
    this.resumedPartitions = startAt;
    this.journal = journal;
    try {
      await this.findLargeKeys(partitions);
      for (let p = startAt; p < partitions; p++) {
        await eachPartition(this.keysOf, p, partitions, 2, (keys) => this.processPartition(keys), p === 0 ? first : undefined);
        const { buckets, candidatePairs, verifiedPairs } = this.verifier;
        await journal?.checkpoint(p + 1, { buckets, candidatePairs, verifiedPairs });
        this.settings.onProgress?.('buckets', p + 1, partitions);
      }
    } catch (err) {
      if (err instanceof TooManyKeysError) throw new UserError(`the band keys of "${this.settings.index}" do not fit ${MAX_PARTITIONS} partitions of ${this.settings.bucketsPerPartition} keys`);
      throw err;
    }
  }

  /** The journal of this run: verified pairs go in as they are found; closed once the clusters are written. */
  journal?: DedupJournal;

  /** Every signature, when the index was read into memory. */
  private pool?: SignaturePool;

  /** Lets the signatures held in memory go, once the clusters are cut. */
  dropSignatures(): void {
    this.pool = undefined;
  }

  /** The signatures the clusters are cut with: from memory when the index was read into it, else through the store. */
  readonly signatures: SignatureSource = async (ids) => {
    const pool = this.pool;
    if (!pool) return this.store.load(ids);
    const found = new Map<string, StoredSignature>();
    for (const id of ids) {
      const signature = pool.find(id);
      if (signature) found.set(id, signature);
    }
    return found;
  };

  /** Every signature read once into memory, then the buckets of each band in turn, each band journaled. */
  private async runInMemory(): Promise<void> {
    const { index, prefix, scope, storedFields: fields, pageSize, documents, bucketChunk, numbers } = this.settings;
    const resumed = await this.resumeJournal('memory');
    const startAt = resumed?.journal.partitionsDone ?? 0;
    this.resumedPartitions = startAt;
    if (resumed && startAt === resumed.partitions) {
      this.journal = resumed.journal; // every band was done: the replayed pairs are the families (cut with signatures read again)
      return;
    }
    const pool = await readPool(this.client, this.store, { index, prefix, scope, fields, pageSize, documents, numbers, onDocuments: (done, total) => this.settings.onProgress?.('signatures', done, total) });
    this.pool = pool;
    this.journal = resumed?.journal ?? (await this.startJournal('memory', pool.bandCount));
    for (let band = 0; band < pool.bandCount; band++) {
      await verifyBand(pool, this.verifier, band, bucketChunk, band < startAt);
      if (band < startAt) continue;
      const { buckets, candidatePairs, verifiedPairs } = this.verifier;
      await this.journal?.checkpoint(band + 1, { buckets, candidatePairs, verifiedPairs });
      this.settings.onProgress?.('bands', band + 1, pool.bandCount);
    }
  }

  private identity(pass: DedupRunIdentity['pass']): DedupRunIdentity {
    const { index, params, prefix, minSimilarity, bucketsPerPartition, bucketChunk, uuids } = this.settings;
    return { index, uuids: uuids.join(','), params, prefix, minSimilarity, bucketsPerPartition, bucketChunk, pass };
  }

  /** With --resume, the killed run's journal, its pairs replayed; undefined for a new run. */
  private async resumeJournal(pass: DedupRunIdentity['pass']): Promise<{ journal: DedupJournal; partitions: number } | undefined> {
    if (!this.settings.resume || !this.settings.journalFile) return undefined;
    const { journal, pairs, partitions } = await DedupJournal.resume(this.settings.journalFile, this.identity(pass));
    for (const pair of pairs) this.verifier.record(pair);
    Object.assign(this.verifier, journal.counters);
    return { journal, partitions };
  }

  private async startJournal(pass: DedupRunIdentity['pass'], partitions: number): Promise<DedupJournal | undefined> {
    return this.settings.journalFile ? DedupJournal.start(this.settings.journalFile, { ...this.identity(pass), partitions }) : undefined;
  }

  /** How many partitions, and where to start: from the beginning, or (--resume) where the killed run stopped. */
  private async plan(): Promise<{ partitions: number; first?: PartitionKeys | null; startAt: number; journal?: DedupJournal }> {
    const { index, bucketsPerPartition } = this.settings;
    const resumed = await this.resumeJournal('partitions');
    if (resumed) return { partitions: resumed.partitions, startAt: resumed.journal.partitionsDone, journal: resumed.journal };
    const cardinality = await this.client.search(index, { size: 0, query: this.settings.scope, aggs: { keys: { cardinality: { field: this.field } } } });
    const { partitions, first } = await planPartitions(this.keysOf, cardinality.aggregations?.keys?.value ?? 0, bucketsPerPartition);
    return { partitions, first, startAt: 0, journal: await this.startJournal('partitions', partitions) };
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
      for (const key of chunk) members.set(key, []);
      for await (const page of scanIndex(this.client, {
        index: this.settings.index,
        query: { bool: { filter: [this.settings.scope, { terms: { [this.field]: chunk } }] } },
        sourceIncludes: [],
        // A document's band keys come from doc values, with each page, so that nothing is read twice.
        docvalueFields: [this.field],
        pageSize: this.settings.pageSize,
        pointInTime: this.client.pointInTime,
      })) {
        for (const hit of page) {
          for (const key of (hit.fields?.[this.field] ?? []) as string[]) if (inChunk.has(key)) members.get(key)!.push(hit._id);
        }
      }
    }
    return members;
  }

  /** A key held by more documents than one bucket verifies at once: read on its own, in index order (see LargeKeyJoin). */
  private async verifyLargeKey(key: string): Promise<void> {
    const join = new LargeKeyJoin(this.verifier, Number.parseInt(key, 10), this.settings.bucketChunk, (ids) => this.store.load(ids));
    for await (const page of scanIndex(this.client, {
      index: this.settings.index,
      query: { bool: { filter: [this.settings.scope, { term: { [this.field]: key } }] } },
      sourceIncludes: [],
      pageSize: this.settings.bucketChunk,
      pointInTime: this.client.pointInTime,
    })) {
      for (const hit of page) await join.add(hit._id);
    }
    await join.finish();
  }
}
