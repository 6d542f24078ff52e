// The bands of a spilled pass sorted ahead, on another core: while the caller verifies bands b..b+k-1, a
// worker thread (band-sort-worker.ts) reads and sorts the next k, so that each band costs the longer of its
// sort and its verification rather than both. The members' slots in bucket order come back in shared buffers
// of two sets used in turn (the caller is done with one set's bands before the set after next is asked for).
// When asked, the worker also gathers the bands' members into range files in bucket order (band-gather.ts),
// all k bands in one pass over the records, so that the disk is read in order on that core too, and once for
// k bands.
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
  /** Two sets of buffers, a band each, used in turn. */
  private readonly orders: SharedArrayBuffer[][] = [[], []];
  private asked = 0;

  constructor(
    private readonly documents: number,
    private readonly bucketChunk: number,
    /** The file of each band's hashes. */
    private readonly fileOf: (band: number) => string,
    /** Keys the worker sorts at once (default SORT_PASS_KEYS). */
    private readonly passKeys?: number,
  ) {}

  /**
   * Sorts these bands, gathering those with a task in one pass (at most two sets are out at once: the one
   * being verified and the next).
   */
  async sort(bands: readonly number[], gather: ReadonlyArray<GatherTask | undefined> = []): Promise<SortedBand[]> {
    const set = this.orders[this.asked++ % 2];
    while (set.length < bands.length) set.push(new SharedArrayBuffer(4 * this.documents));
    const task: BandSortTask = {
      bands: bands.map((band, k) => ({ file: this.fileOf(band), order: set[k] })),
      documents: this.documents,
      bucketChunk: this.bucketChunk,
      gather: [...gather],
      passKeys: this.passKeys,
    };
    const sorted = (await this.pool.run(task)) as SortedRuns[];
    return sorted.map(({ members, ...band }, k) => ({ ...band, order: new Uint32Array(set[k], 0, members) }));
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
