// One share of a split dedup (dedup --share K/N --pairs-index NAME): the stages of the full pass
// (full-pass.ts) for the buckets whose key hash is in the share's range, journaled in the pairs index
// instead of a local file, so that the final step, on any machine, reads them:
//  1. scan: every signature in scope, through this process's own point-in-time scan (table-read.ts); a
//     bucket's members may be anywhere in the index, so every share reads all of it;
//  2. bucket and verify, band by band, through the share's view of the table (share-table.ts);
//  3. each band's verified pairs written as pages (pages.ts), then the share's marker moved on;
//  4. every band done: the marker says complete once the engine holds every page it lists.
// A share run again picks up its work: a complete one is checked and left as it is; a killed one replays
// the pairs of the bands its marker says are done (each checked against the signatures just read) and goes
// on from the next band, writing a half-written band again under the same ids. A marker or a page that
// fails its checks is not taken over: the share starts over and says why.
// Input: the run's settings, the share and the pairs index. Output: what the share found and wrote.
import os from 'node:os';
import type { EngineClient } from '../../../engine/client.js';
import { verifyBands } from '../bands/band-pass.js';
import type { DocIds } from '../documents/doc-numbers.js';
import { checkPair } from './pair-check.js';
import { markerDocument, pageDocument, pagesOf, readMarker, readPage, type ShareProgress, sortedPairs } from './pages.js';
import type { PairsIndex } from './pairs-index.js';
import { namedPairs, type NumberedPair, type PairVerifier, type VerifiedPair, type VerifierFor } from '../verify/pair-verifier.js';
import { UserError } from '../../../errors.js';
import { keyRange, markerId, pageId, type SharePlan, shareName, type ShareRunIdentity } from './plan.js';
import { shareTable } from './share-table.js';
import type { SignatureStore } from '../documents/signature-store.js';
import { type ReadTable, readTable, type TableRead } from '../scan/table-read.js';
import { plural } from '../../../plural.js';

/** How one share runs: the scan of the full pass, which share of which run, the pairs index it journals to, the bar. */
export interface ShareSettings extends Omit<TableRead, 'onDocuments'> {
  share: SharePlan;
  identity: ShareRunIdentity;
  /** The run's name (plan.ts runName). */
  run: string;
  pairs: PairsIndex;
  bucketChunk: number;
  minSimilarity: number;
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

/**
 * One share of a split run: the full pass's stages over the share's buckets, journaled in the pairs index so that the
 * final step reads them on any machine (the file header gives the stages and how a share picks up its work).
 */
export class SharePass {
  /** The pairs verified in the band being verified, by number. */
  private band: NumberedPair[] = [];
  private table?: ReadTable;
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
    try {
      const table = await this.readTable();
      const taken = earlier.progress && (await this.takeOver(earlier.progress, table));
      const restarted = earlier.problem ?? (earlier.progress && typeof taken === 'string' ? taken : undefined);
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
      this.table?.close?.();
      this.table = undefined;
    }
  }

  /** Stage 1: every signature in scope. */
  private async readTable(): Promise<ReadTable> {
    const onDocuments = (done: number, total: number) => this.settings.onProgress?.('signatures', done, total);
    this.table = await readTable(this.client, this.store, { ...this.settings, onDocuments });
    return this.table;
  }

  /** Stages 2 and 3: the share's buckets, band by band from the first not done, each band's pairs written before the marker moves on. */
  private async verify(table: ReadTable, progress: ShareProgress): Promise<void> {
    const { bucketChunk } = this.settings;
    const view = shareTable(table, {
      range: keyRange(this.settings.share),
      bucketChunk,
      onForeignLargeKey: (band, hash) => this.verifier.markLargeKey(band, hash),
    });
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
    const pages = pagesOf(sortedPairs(namedPairs(this.band, this.documents)));
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
   * An earlier attempt's bands taken over: their pairs replayed into the verifier (so that it goes on from
   * where that attempt was), each page and pair checked first; or why they cannot be.
   */
  private async takeOver(earlier: ShareProgress, table: ReadTable): Promise<ShareProgress | string> {
    if (earlier.bandCount !== table.bandCount) return `its marker counts ${plural(earlier.bandCount, 'band')}, the signatures have ${table.bandCount}`;
    const pairs: VerifiedPair[] = [];
    for await (const { id, source, band, page } of this.pagesOf(earlier)) {
      const read = readPage(source, { run: this.settings.run, share: this.settings.share, band, page, minSimilarity: this.settings.minSimilarity });
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
    const numbers = ids.map((id) => this.documents.find(id) ?? -1);
    const signatures = await table.find(ids, numbers);
    const checked: VerifiedPair[] = [];
    for (const pair of pairs) {
      const check = checkPair(pair, signatures.get(pair.a), signatures.get(pair.b), this.settings.minSimilarity, this.verifier.comparing);
      if ('problem' in check) return check.problem;
      if ('pair' in check) checked.push(check.pair);
    }
    return checked;
  }

  /** The pages a marker lists, read by id, in order. */
  private async *pagesOf(progress: ShareProgress): AsyncGenerator<{ id: string; source: unknown; band: number; page: number }> {
    const { run, share } = this.settings;
    const places = progress.pages.flatMap((count, band) => Array.from({ length: count }, (_, page) => ({ band, page, id: pageId(run, share, band, page) })));
    const where = new Map(places.map((p) => [p.id, p]));
    for await (const { id, source } of this.settings.pairs.sources(places.map((p) => p.id))) yield { id, source, ...(where.get(id) as { band: number; page: number }) };
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
    const listed = progress.pages.reduce((sum, n) => sum + n, 0);
    const held = await this.settings.pairs.countPages(this.settings.run, this.settings.share.number);
    return held === listed ? undefined : `${this.settings.pairs.name} holds ${held} of its pages where its marker lists ${listed}`;
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

  private get documents(): DocIds {
    return this.verifier.clusters.documents;
  }
}
