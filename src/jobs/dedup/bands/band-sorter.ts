// The bands of a spilled pass sorted ahead, on another core: while the caller verifies bands b..b+k-1, a
// worker thread (band-sort.worker.ts) reads and sorts the next k, so that each band costs the longer of its
// sort and its verification rather than both. The members' slots in bucket order and their buckets come
// back in two files a band (band-members-file.ts), read a range at a time by the verification. When asked, the worker also gathers the bands' members into range files in bucket order (band-gather.ts),
// all k bands in one pass over the records, so that the disk is read in order on that core too, and once for
// k bands.
import { Piscina } from 'piscina';
import { workerFile } from '../../../worker-file.js';
import type { GatherTask } from './band-gather.js';
import { MembersOnDisk, membersFiles } from './band-members-file.js';
import type { BandMembersAt } from './band-ranges.js';
import type { BandSortTask, SortedRuns } from './band-sort.worker.js';
import { fromWorker } from '../spill/spill-folder.js';

/** A band sorted into buckets: its members in bucket order with their ranges (a range's files when gathered), its large keys. */
export interface SortedBand extends Omit<SortedRuns, 'members' | 'ranges'> {
  members: BandMembersAt;
}

export class BandSorter {
  private readonly pool = new Piscina({ filename: workerFile('./band-sort.worker.js', import.meta.url), minThreads: 1, maxThreads: 1 });

  constructor(
    private readonly documents: number,
    private readonly bucketChunk: number,
    /** The file of each band's hashes. */
    private readonly fileOf: (band: number) => string,
    /** Members of a range of a band not gathered. */
    private readonly windowMembers: number,
    /** Keys the worker sorts at once (default SORT_PASS_KEYS). */
    private readonly passKeys?: number,
  ) {}

  /**
   * Sorts these bands, gathering those with a task in one pass; each band's members in two files beside
   * its hashes, until the band is verified (its members' remove()).
   */
  async sort(bands: readonly number[], gather: ReadonlyArray<GatherTask | undefined> = []): Promise<SortedBand[]> {
    const files = bands.map((band) => membersFiles(this.fileOf(band), band));
    const task: BandSortTask = {
      bands: bands.map((band, k) => ({ file: this.fileOf(band), members: files[k] })),
      documents: this.documents,
      bucketChunk: this.bucketChunk,
      windowMembers: this.windowMembers,
      gather: [...gather],
      passKeys: this.passKeys,
    };
    const sorted = (await this.pool.run(task).catch((err: unknown) => Promise.reject(fromWorker(err)))) as SortedRuns[];
    return sorted.map(({ members, ranges, ...band }, k) => ({ ...band, members: new MembersOnDisk(files[k], ranges, members) }));
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
