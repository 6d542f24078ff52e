// The LSH buckets of one band: the documents sorted by their key's 32-bit hash (ties in slot order), as runs
// of two or more equal hashes. A radix sort, linear in the documents (a comparison sort of a hundred million
// keys takes minutes a band): a pass on the top 8 bits spreads the keys into 256 slices, each then sorted on
// its low 24 bits. The hashes are read in slot order a chunk at a time, never held as a column; the members
// (bandMembers) are sorted a part of the key space at a time (at most SORT_PASS_KEYS keys, 8 bytes each), for
// one more read of the hashes a part. A spilled pass's bands are sorted ahead on another core (BandSorter).
import { Piscina } from 'piscina';
import { forCount, plural } from '../../../plural.js';
import { workerFile } from '../../../worker-file.js';
import { fromWorker } from '../spill/spill-folder.js';
import { enlarged } from '../documents/doc-numbers.js';
import type { GatherTask } from './band-gather.js';
import { type BandMembersAt, type BandRange, type MembersFiles, type MembersSink, MembersOnDisk, membersFiles } from './band-members.js';

/** The documents of one band in bucket order, and its buckets. */
export interface BandBuckets {
  /** Slots sorted by (hash as unsigned, slot). */
  order: Uint32Array;
  /** The hash of each place in `order` (sorted, unsigned). */
  keys: Uint32Array;
  /** The runs of two or more equal hashes: run r is order[runs[2r], runs[2r + 1]). */
  runs: Uint32Array;
}

/** The hashes of a band's documents in slot order, handed to `visit` a chunk at a time (as many times as asked). */
export type BandSource = (visit: (chunk: Uint32Array) => void) => void;

/** Arrays a band's sort may reuse, band after band (grown when a band is larger). */
export interface BandScratch {
  keys: Uint32Array;
  order: Uint32Array;
  /** The radix passes' scratch, the size of the largest top-byte slice sorted (kept by bandMembers). */
  spare?: { keys: Uint32Array; order: Uint32Array };
}

/** Sorts the slots 0..n-1 by their hash (read as unsigned 32-bit), then by slot, and finds the runs. */
export function bandBuckets(hashes: Int32Array | Uint32Array | BandSource, n = typeof hashes === 'function' ? 0 : hashes.length, scratch?: BandScratch): BandBuckets {
  const source: BandSource = typeof hashes === 'function' ? hashes : (visit) => visit(new Uint32Array(hashes.buffer, hashes.byteOffset, n));
  if (scratch && scratch.keys.length < n) [scratch.keys, scratch.order] = [new Uint32Array(n), new Uint32Array(n)];
  const keys = scratch ? scratch.keys.subarray(0, n) : new Uint32Array(n);
  const order = scratch ? scratch.order.subarray(0, n) : new Uint32Array(n);
  const starts = sliceStarts(source, n);
  sortSlices(source, starts, 0, 256, keys, order, { keys: new Uint32Array(0), order: new Uint32Array(0) });
  return { order, keys, runs: runsOf(keys) };
}

/** Keys sorted at once by bandMembers, by default (8 bytes each: 128 MB, and the scratch of its largest slice). */
const SORT_PASS_KEYS = 1 << 24;

/**
 * The members of a band handed to `sink` a bucket at a time in bucket order, sorted a part of the key space
 * at a time (consecutive top-byte slices of at most `passKeys` keys, a larger slice alone; `scratch` grown to
 * the largest part). Gives back the hashes (signed, as the signatures hold them) of the keys held by more
 * than `bucketChunk` documents.
 */
export function bandMembers(source: BandSource, n: number, settings: { bucketChunk: number; sink: MembersSink; scratch: BandScratch; passKeys?: number }): Int32Array {
  const { bucketChunk, sink, scratch, passKeys = SORT_PASS_KEYS } = settings;
  const starts = sliceStarts(source, n);
  const spare = (scratch.spare ??= { keys: new Uint32Array(0), order: new Uint32Array(0) });
  const large: number[] = [];
  for (const [from, to] of parts(starts, passKeys)) {
    const size = starts[to] - starts[from];
    if (scratch.keys.length < size) [scratch.keys, scratch.order] = [new Uint32Array(size), new Uint32Array(size)];
    const keys = scratch.keys.subarray(0, size);
    const order = scratch.order.subarray(0, size);
    sortSlices(source, starts, from, to, keys, order, spare);
    const runs = runsOf(keys);
    for (let r = 0; r < runs.length; r += 2) {
      if (runs[r + 1] - runs[r] > bucketChunk) large.push(keys[runs[r]] | 0);
      sink.addRun(order.subarray(runs[r], runs[r + 1]));
    }
  }
  return Int32Array.from(large);
}

/** What the sorting thread is asked: a few bands of a spill to sort, and maybe to gather (band-sort.worker.ts). */
export interface BandSortTask {
  /** Each band's file of hashes (4 bytes a document, in slot order), and the files its members go to. */
  bands: Array<{ file: string; members: MembersFiles }>;
  documents: number;
  /** Documents of one key verified at once: a key held by more is a large key. */
  bucketChunk: number;
  passKeys?: number;
  /** Members of a range of a band not gathered. */
  windowMembers: number;
  /** A band's gather (undefined: not gathered), all of them in one pass once they are sorted. */
  gather?: Array<GatherTask | undefined>;
}

/** What the sorting thread hands back of each band (its members stay in the band's files). */
export interface SortedRuns {
  /** Its ranges, with their checks (and files, when gathered). */
  ranges: BandRange[];
  members: number;
  /** The hashes (signed 32-bit) of the keys held by more than bucketChunk documents. */
  largeKeys: Int32Array;
  /** Milliseconds sorting the band, and gathering the task's bands (told with the first). */
  sortMs?: number;
  gatherMs?: number;
}

/** A band sorted into buckets: its members with their ranges, its large keys. */
export interface SortedBand extends Omit<SortedRuns, 'members' | 'ranges'> {
  members: BandMembersAt;
}

/** The thread that sorts a spilled pass's bands ahead of their verification (its code: band-sort.worker.ts). */
export class BandSorter {
  private readonly pool = new Piscina({ filename: workerFile('./band-sort.worker.js', import.meta.url), minThreads: 1, maxThreads: 1 });

  constructor(
    private readonly documents: number,
    private readonly bucketChunk: number,
    private readonly fileOf: (band: number) => string,
    private readonly windowMembers: number,
    private readonly passKeys?: number,
  ) {}

  /** These bands sorted, those with a gather task gathered in one pass; each one's members in files until it is verified. */
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

/** The parts of bandMembers: [from, to) ranges of top bytes, consecutive, each at most `passKeys` keys unless one slice is larger. */
function parts(starts: Uint32Array, passKeys: number): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  let from = 0;
  for (let d = 1; d <= 256; d++) {
    if (d === 256 || starts[d + 1] - starts[from] > passKeys) {
      if (starts[d] > starts[from]) found.push([from, d]);
      from = d;
    }
  }
  return found;
}

/** Where each top-byte slice of the band's keys starts among them sorted (and, at 256, where they end). */
function sliceStarts(source: BandSource, n: number): Uint32Array {
  const starts = new Uint32Array(257);
  let seen = 0;
  source((chunk) => {
    for (let k = 0; k < chunk.length; k++) starts[(chunk[k] >>> 24) + 1]++;
    seen += chunk.length;
  });
  if (seen !== n) throw new Error(`a band held ${plural(seen, 'hash', 'hashes')} where ${plural(n, 'document')} ${forCount(n, 'was', 'were')} expected`);
  for (let d = 0; d < 256; d++) starts[d + 1] += starts[d];
  return starts;
}

/**
 * The keys of slices [from, to) sorted, with their slots, into `keys` and `order` (as long as those slices):
 * placed by their top 8 bits in slot order (stable), then each slice sorted on its low bits.
 */
function sortSlices(source: BandSource, starts: Uint32Array, from: number, to: number, keys: Uint32Array, order: Uint32Array, spare: { keys: Uint32Array; order: Uint32Array }): void {
  const base = starts[from];
  const next = starts.slice(0, 256).map((start) => start - base);
  let slot = 0;
  source((chunk) => {
    for (let k = 0; k < chunk.length; k++, slot++) {
      const key = chunk[k];
      const d = key >>> 24;
      if (d < from || d >= to) continue;
      const at = next[d]++;
      keys[at] = key;
      order[at] = slot;
    }
  });
  let largest = 0;
  for (let d = from; d < to; d++) largest = Math.max(largest, starts[d + 1] - starts[d]);
  if (spare.keys.length < largest) [spare.keys, spare.order] = [new Uint32Array(largest), new Uint32Array(largest)];
  for (let d = from; d < to; d++) sortLowBits(keys.subarray(starts[d] - base, starts[d + 1] - base), order.subarray(starts[d] - base, starts[d + 1] - base), spare);
}

/** One slice sorted in place on bits 0..23 of its keys (stable passes of 8 bits, through `spare`). */
function sortLowBits(keys: Uint32Array, order: Uint32Array, spare: { keys: Uint32Array; order: Uint32Array }): void {
  const n = keys.length;
  if (n < 2) return;
  const counts = new Uint32Array(256);
  let from = { keys, order };
  let to = { keys: spare.keys.subarray(0, n), order: spare.order.subarray(0, n) };
  for (let shift = 0; shift < 24; shift += 8) {
    counts.fill(0);
    for (let k = 0; k < n; k++) counts[(from.keys[k] >>> shift) & 0xff]++;
    // A digit every key shares leaves the order as it is: skip the pass (common in slices of one key).
    if (counts[(from.keys[0] >>> shift) & 0xff] === n) continue;
    let sum = 0;
    for (let d = 0; d < 256; d++) {
      const c = counts[d];
      counts[d] = sum;
      sum += c;
    }
    for (let k = 0; k < n; k++) {
      const key = from.keys[k];
      const at = counts[(key >>> shift) & 0xff]++;
      to.keys[at] = key;
      to.order[at] = from.order[k];
    }
    [from, to] = [to, from];
  }
  if (from.keys !== keys) {
    keys.set(from.keys);
    order.set(from.order);
  }
}

/** The runs of two or more equal keys among the sorted keys, as [start, end) pairs. */
function runsOf(sorted: Uint32Array): Uint32Array {
  let runs = new Uint32Array(1024);
  let count = 0;
  const n = sorted.length;
  let start = 0;
  for (let k = 1; k <= n; k++) {
    if (k < n && sorted[k] === sorted[start]) continue;
    if (k - start >= 2) {
      if (count + 2 > runs.length) runs = enlarged(runs, runs.length * 2);
      runs[count++] = start;
      runs[count++] = k;
    }
    start = k;
  }
  return runs.slice(0, count);
}
