// The bands of a spilled pass sorted one ahead, on another core: while the caller verifies band b, a worker
// thread (band-sort-worker.ts) reads and sorts band b + 1, so that each band costs the longer of its sort
// and its verification rather than both. The members' slots in bucket order come back in one of two shared
// buffers, used in turn (the caller is done with band b's before band b + 2 is asked for). When asked, the worker also
// gathers the band's members into range files in bucket order (band-gather.ts), so that the disk is read in
// order on that core too.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { GatherTask } from './band-gather.js';
import type { BandSortTask, SortedRuns } from './band-sort-worker.js';

/** A band sorted into buckets: slots in bucket order (every document's, or its members' only), its runs (places in that order), its large keys. */
export interface SortedBand extends Omit<SortedRuns, 'members'> {
  order: Uint32Array;
}

// The compiled worker beside this module; when this module runs from the TypeScript sources (the tests),
// the build of the same code in dist/ (npm test builds first).
function workerFile(): string {
  const beside = new URL('./band-sort-worker.js', import.meta.url);
  return existsSync(fileURLToPath(beside)) ? beside.href : new URL('../../../dist/jobs/dedup/band-sort-worker.js', import.meta.url).href;
}

export class BandSorter {
  private readonly pool = new Piscina({ filename: workerFile(), minThreads: 1, maxThreads: 1 });
  private readonly orders: [SharedArrayBuffer, SharedArrayBuffer];
  private asked = 0;

  constructor(
    private readonly documents: number,
    private readonly bucketChunk: number,
    /** The file of each band's hashes. */
    private readonly fileOf: (band: number) => string,
    /** Keys the worker sorts at once (default SORT_PASS_KEYS). */
    private readonly passKeys?: number,
  ) {
    this.orders = [new SharedArrayBuffer(4 * documents), new SharedArrayBuffer(4 * documents)];
  }

  /** Sorts a band, and gathers it when asked (at most two are out at once: the one being verified and the next). */
  async sort(band: number, gather?: GatherTask): Promise<SortedBand> {
    const order = this.orders[this.asked++ % 2];
    const task: BandSortTask = { file: this.fileOf(band), documents: this.documents, bucketChunk: this.bucketChunk, order, gather, passKeys: this.passKeys };
    const sorted = (await this.pool.run(task)) as SortedRuns;
    return { ...sorted, order: new Uint32Array(order, 0, sorted.members) };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
