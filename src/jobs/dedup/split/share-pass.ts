// One share of a split dedup (--share K/N --pairs-index NAME): the full pass's stages (full-pass.ts) for the
// buckets whose key hash is in the share's range, journaled in the pairs index instead of a local file so that
// the final step, on any machine, reads them. Every share scans the whole index (a bucket's members may be
// anywhere), verifies its bands through a view of the table that hides other shares' keys, and writes each
// band's pairs as pages before its marker moves on. Run again, a share checks and keeps a complete marker, or
// replays the bands a killed attempt did (each pair checked) and goes on; what fails a check is started over.
import os from 'node:os';
import type { EngineClient } from '../../../engine/client.js';
import { UserError } from '../../../errors.js';
import { plural } from '../../../plural.js';
import { verifyBands } from '../bands/band-pass.js';
import { mixed } from '../documents/doc-numbers.js';
import type { SignatureStore } from '../documents/signature-store.js';
import type { SignatureTable } from '../scan/signature-table.js';
import { type ReadTable, readTable, type TableRead } from '../scan/table-read.js';
import { namedPairs, type NumberedPair, type PairVerifier, type VerifiedPair, type VerifierFor } from '../verify/pair-verifier.js';
import { checkPair, markerDocument, pageDocument, pagesOf, readMarker, readPage, type ShareProgress, sortedPairs } from './pages.js';
import type { PairsIndex } from './pairs-index.js';
import { inRange, type KeyRange, keyRange, markerId, pageId, type SharePlan, shareName, type ShareRunIdentity } from './plan.js';

/** How one share runs: the scan of the full pass, which share of which run (its bar and bucket chunk), the pairs index. */
export interface ShareSettings extends Omit<TableRead, 'onDocuments'> {
  share: SharePlan;
  identity: ShareRunIdentity;
  /** The run's name (plan.ts runName). */
  run: string;
  pairs: PairsIndex;
  /** Documents left out of the scan for a damaged signature (counted in the marker). */
  damaged: () => number;
  onProgress?: (stage: 'signatures' | 'bands', done: number, total: number) => void;
}

/** How a share's run went: complete before, resumed from some bands, or started again (and why), and its progress. */
export interface ShareOutcome {
  /** The share was complete before this run: checked, nothing done. */
  alreadyComplete: boolean;
  /** Bands taken over from an earlier attempt. */
  resumedBands: number;
  /** Why an earlier attempt's work was not taken over. */
  restarted?: string;
  progress: ShareProgress;
}

/** One share of a split run (the file header gives its stages and how a share picks up its work). */
export class SharePass {
  /** The pairs verified in the band being verified, by number. */
  private band: NumberedPair[] = [];
  /** Made with the share's pages to write to: each pair it verifies is journaled with its band. */
  private readonly verifier: PairVerifier;

  constructor(
    private readonly client: EngineClient,
    private readonly store: SignatureStore,
    verifierFor: VerifierFor,
    private readonly settings: ShareSettings,
  ) {
    this.verifier = verifierFor((pair) => this.band.push(pair));
  }

  async run(): Promise<ShareOutcome> {
    const earlier = await this.earlierAttempt();
    if (earlier.progress?.complete) {
      const problem = await this.missingPages(earlier.progress);
      if (!problem) return { alreadyComplete: true, resumedBands: earlier.progress.bandCount, progress: earlier.progress };
      earlier.problem = problem;
      earlier.progress = undefined;
    }
    const onDocuments = (done: number, total: number) => this.settings.onProgress?.('signatures', done, total);
    const table = await readTable(this.client, this.store, { ...this.settings, onDocuments });
    try {
      const taken = earlier.progress && (await this.takeOver(earlier.progress, table));
      const restarted = earlier.problem ?? (typeof taken === 'string' ? taken : undefined);
      const progress = typeof taken === 'object' ? taken : this.freshProgress(table.bandCount);
      const resumedBands = progress.bandsDone;
      await this.settings.pairs.deletePages(this.settings.run, this.settings.share.number, progress.bandsDone);
      await this.writeMarker(progress);
      await this.verify(table, progress);
      progress.complete = true;
      await this.writeMarker(progress);
      await this.confirmComplete(progress);
      return { alreadyComplete: false, resumedBands, restarted, progress };
    } finally {
      table.close?.();
    }
  }

  /** The share's buckets, band by band from the first not done, each band's pairs written before the marker moves on. */
  private async verify(table: ReadTable, progress: ShareProgress): Promise<void> {
    const { bucketChunk } = this.settings.identity;
    const view = shareTable(table, { range: keyRange(this.settings.share), bucketChunk, onForeignLargeKey: (band, hash) => this.verifier.markLargeKey(band, hash) });
    this.band = [];
    await verifyBands(view, this.verifier, {
      bucketChunk,
      // The view's hidden keys (one of its own a document, consecutive) fill whole top-byte slices: sorted in
      // parts, each slice of them would cost a read of the band for nothing, so a share sorts a band whole.
      sortPassKeys: Number.POSITIVE_INFINITY,
      startAt: progress.bandsDone,
      onBand: async (band) => {
        await this.writeBand(band, progress);
        this.settings.onProgress?.('bands', band + 1, table.bandCount);
      },
    });
  }

  /** A band's pairs as pages (sorted, so that the same pairs make the same pages), then the marker. */
  private async writeBand(band: number, progress: ShareProgress): Promise<void> {
    const { run, share } = this.settings;
    const pages = pagesOf(sortedPairs(namedPairs(this.band, this.verifier.clusters.documents)));
    await this.settings.pairs.putAll(pages.map((columns, page) => ({ id: pageId(run, share, band, page), document: pageDocument(run, share, band, page, columns) })));
    progress.pairs += this.band.length;
    this.band = [];
    progress.pages.push(pages.length);
    progress.bandsDone = band + 1;
    Object.assign(progress, { buckets: this.verifier.buckets, candidatePairs: this.verifier.candidatePairs, verifiedPairs: this.verifier.verifiedPairs });
    await this.writeMarker(progress);
  }

  /** The marker of an earlier attempt, checked: its progress, or why it is not taken over. */
  private async earlierAttempt(): Promise<{ progress?: ShareProgress; problem?: string }> {
    const { run, share, identity, pairs } = this.settings;
    const source = await pairs.source(markerId(run, share));
    if (source === undefined) return {};
    const progress = readMarker(source, { run, share, identity });
    return typeof progress === 'string' ? { problem: `its marker in ${pairs.name} could not be trusted (${progress})` } : { progress };
  }

  /**
   * An earlier attempt's bands taken over: their pairs replayed into the verifier (so that it goes on from where
   * that attempt was), each page checked, and each pair against the signatures just read; or why they cannot be.
   */
  private async takeOver(earlier: ShareProgress, table: ReadTable): Promise<ShareProgress | string> {
    const { run, share, identity, pairs: pairsIndex } = this.settings;
    if (earlier.bandCount !== table.bandCount) return `its marker counts ${plural(earlier.bandCount, 'band')}, the signatures have ${table.bandCount}`;
    const pairs: VerifiedPair[] = [];
    for await (const { id, source, band, page } of pairsIndex.pages(run, share, earlier.pages)) {
      const read = readPage(source, { run, share, band, page, minSimilarity: identity.minSimilarity });
      if (typeof read === 'string') return `its page ${id} ${source === undefined ? 'is missing' : `could not be trusted (${read})`}`;
      const checked = await this.checkPairs(read, table);
      if (typeof checked === 'string') return `its page ${id}: a pair ${checked}`;
      pairs.push(...checked);
    }
    for (const pair of pairs) this.verifier.record(pair);
    Object.assign(this.verifier, { buckets: earlier.buckets, candidatePairs: earlier.candidatePairs, verifiedPairs: earlier.verifiedPairs });
    return { ...earlier, pages: [...earlier.pages], updatedAt: new Date().toISOString() };
  }

  /** These pairs as the signatures just read give them (those under the bar by whole values left out), or why one is not one of them. */
  private async checkPairs(pairs: readonly VerifiedPair[], table: ReadTable): Promise<VerifiedPair[] | string> {
    const ids = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
    const signatures = await table.find(ids, ids.map((id) => this.verifier.clusters.documents.find(id) ?? -1));
    const checked: VerifiedPair[] = [];
    for (const pair of pairs) {
      const check = checkPair(pair, signatures.get(pair.a), signatures.get(pair.b), this.settings.identity.minSimilarity, this.verifier.comparing);
      if ('problem' in check) return check.problem;
      if ('pair' in check) checked.push(check.pair);
    }
    return checked;
  }

  /** Asks the engine whether it holds the complete marker and every page it lists; throws when it does not. */
  private async confirmComplete(progress: ShareProgress): Promise<void> {
    const { share, pairs } = this.settings;
    const back = await this.earlierAttempt();
    const problem = back.progress?.complete ? await this.missingPages(progress) : `its marker reads back as ${back.problem ?? 'not complete'}`;
    if (problem) throw new UserError(`share ${shareName(share)} wrote its pairs, but ${problem}; run it again (it goes on from what ${pairs.name} holds)`);
  }

  /** Whether the engine holds exactly the pages a marker lists: undefined when it does, else what is wrong. */
  private async missingPages(progress: ShareProgress): Promise<string | undefined> {
    const { run, share, pairs } = this.settings;
    const listed = progress.pages.reduce((sum, n) => sum + n, 0);
    const held = await pairs.countPages(run, share.number);
    return held === listed ? undefined : `${pairs.name} holds ${held} of its pages where its marker lists ${listed}`;
  }

  private freshProgress(bandCount: number): ShareProgress {
    const now = new Date().toISOString();
    return { bandCount, bandsDone: 0, pages: [], pairs: 0, buckets: 0, candidatePairs: 0, verifiedPairs: 0, damaged: 0, complete: false, startedAt: now, updatedAt: now, host: os.hostname() };
  }

  private async writeMarker(progress: ShareProgress): Promise<void> {
    const { run, share, identity, pairs } = this.settings;
    progress.updatedAt = new Date().toISOString();
    progress.damaged = this.settings.damaged();
    await pairs.put(markerId(run, share), markerDocument(run, share, identity, progress));
  }
}

/** The share's key range, the bucket chunk that makes a key large, and who is told of other shares' large keys. */
export interface ShareTableSettings {
  range: KeyRange;
  /** Documents of one band key verified at once: a key held by more is large. */
  bucketChunk: number;
  /** A large key of another share (as the signatures hold it: signed 32-bit), before its band is verified. */
  onForeignLargeKey: (band: number, hash: number) => void;
}

/**
 * The table as a share sees it: each band's key hashes outside its range hidden behind a value of their own (range
 * end + slot, which no other document has: no bucket), so that the band pass makes only the share's buckets. Which
 * hidden keys are large is still told, before the band: a pair met first in a large key may not have been decided
 * there, and is verified again in a later band unless joined (pair-verifier.ts, decidedEarlier); a share blind to
 * the other shares' large keys would take it as decided and lose it. The band file is left out (a band sorted from
 * it on another core would see every key); every other member is the table's own.
 */
export function shareTable(table: SignatureTable, settings: ShareTableSettings): SignatureTable {
  const { range } = settings;
  let scratch = new Uint32Array(0);
  const reported = new Set<number>();
  const counters = new LargeKeyCounters(table.size);
  const view: SignatureTable = {
    // (The table is read whole before a share views it.)
    size: table.size,
    bandCount: table.bandCount,
    numbering: table.numbering,
    idOf: (slot) => table.idOf(slot),
    numberAt: (slot) => table.numberAt(slot),
    load: (slots) => table.load(slots),
    readBand(band, visit) {
      if (!reported.has(band)) {
        reported.add(band);
        for (const hash of counters.largeKeys((v) => table.readBand(band, v), range, settings.bucketChunk)) settings.onForeignLargeKey(band, hash);
      }
      let slot = 0;
      table.readBand(band, (chunk) => {
        if (scratch.length < chunk.length) scratch = new Uint32Array(chunk.length);
        const out = scratch.subarray(0, chunk.length);
        for (let k = 0; k < chunk.length; k++, slot++) out[k] = inRange(range, chunk[k]) ? chunk[k] : (range.hi + slot) % 2 ** 32;
        visit(out);
      });
    },
  };
  // The signatures' records on disk, when the table has them: the band pass may check small buckets on other
  // threads from there (its buckets are this view's, so still only the share's).
  if (table.records) view.records = () => (table.records as NonNullable<SignatureTable['records']>).call(table);
  return view;
}

/**
 * The keys outside a range held by more than a number of documents in one band: counted approximately in a
 * table of counters (a key's counter counts it and the keys that share its place), then exactly for the
 * few places past the number.
 */
export class LargeKeyCounters {
  private readonly counters: Uint32Array;
  private readonly mask: number;

  constructor(documents: number) {
    const bits = Math.min(22, Math.max(10, Math.ceil(Math.log2(Math.max(1, documents)))));
    this.counters = new Uint32Array(1 << bits);
    this.mask = (1 << bits) - 1;
  }

  /** The hashes (signed 32-bit) outside `range` that more than `threshold` documents of the band hold. */
  largeKeys(read: (visit: (chunk: Uint32Array) => void) => void, range: KeyRange, threshold: number): number[] {
    const { counters, mask } = this;
    counters.fill(0);
    read((chunk) => {
      for (let k = 0; k < chunk.length; k++) if (!inRange(range, chunk[k])) counters[mixed(chunk[k]) & mask]++;
    });
    if (!counters.some((c) => c > threshold)) return [];
    const exact = new Map<number, number>();
    read((chunk) => {
      for (let k = 0; k < chunk.length; k++) {
        const h = chunk[k];
        if (!inRange(range, h) && counters[mixed(h) & mask] > threshold) exact.set(h, (exact.get(h) ?? 0) + 1);
      }
    });
    const large: number[] = [];
    for (const [hash, count] of exact) if (count > threshold) large.push(hash | 0);
    return large;
  }
}
