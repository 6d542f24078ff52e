// Bands sorted on a core of their own (a piscina worker), while the caller verifies the bands before them:
// each band's hashes read from the spill's file of that band and sorted into buckets (band-sort.ts); the
// slots of the documents in a bucket (the band's members), in bucket order, written into shared memory the
// caller gave (one buffer a band, from two sets it alternates between), the runs and the hashes of the keys
// too large for one bucket chunk handed back; then, when asked, the bands' members gathered into range files
// in bucket order, all of the task's bands in one pass over the records (band-gather.ts).
// The worker sorts a part of the key space at a time (bandMembers) and keeps its arrays of sorted keys and
// slots from band to band (8 bytes a key of the largest part and of its largest slice: about 136 MB unless
// one top byte holds more); the caller holds only the members (a tenth of the documents or so) of the bands
// it verifies and of those sorted ahead.
import { closeSync, openSync } from 'node:fs';
import { type BandRange, type GatherTask, gatherBands } from './band-gather.js';
import { bandMembers } from './band-sort.js';
import { readAll } from './spill-folder.js';

export interface BandSortTask {
  /** The bands: each with the spill's file of its hashes (4 bytes a document, in slot order) and where its members' slots in bucket order go (room for every document, shared with the caller). */
  bands: Array<{ file: string; order: SharedArrayBuffer }>;
  documents: number;
  /** Documents of one key verified at once: a key held by more is a large key. */
  bucketChunk: number;
  /** Keys sorted at once (default SORT_PASS_KEYS). */
  passKeys?: number;
  /** When given (one a band, or undefined for a band not to gather), the bands' members gathered into range files in one pass once they are sorted. */
  gather?: Array<GatherTask | undefined>;
}

export interface SortedRuns {
  /** The runs, as places among the members (the documents in a bucket, one run after the other). */
  runs: Uint32Array;
  /** Members written into the shared order. */
  members: number;
  /** The hashes (as the signatures hold them: signed 32-bit) of the keys held by more than bucketChunk documents. */
  largeKeys: Int32Array;
  /** The band's ranges and their files, when it was gathered (band-gather.ts). */
  ranges?: BandRange[];
  /** Milliseconds spent sorting the band, and gathering it (the one pass that gathered the bands of a task: counted with the first band). */
  sortMs?: number;
  gatherMs?: number;
}

const CHUNK = 1 << 16;
/** The sorted keys and slots of a part, kept from band to band. */
const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0) };
const chunk = new Uint32Array(CHUNK);

export default function sortBands(task: BandSortTask): SortedRuns[] {
  const sorted = task.bands.map(({ file, order }) => sortBand(task, file, order));
  const toGather = sorted.flatMap((band, k) => {
    const gather = task.gather?.[k];
    return gather ? [{ task: gather, order: band.order, runs: band.runs, k }] : [];
  });
  const began = performance.now();
  const gathered = gatherBands(toGather);
  const gatherMs = performance.now() - began;
  for (const [i, { k }] of toGather.entries()) sorted[k].ranges = gathered[i];
  return sorted.map(({ order, ...band }, k) => ({ ...band, members: order.length, gatherMs: k === 0 ? gatherMs : 0 }));
}

/** One band's members in bucket order (into its shared buffer), its runs and large keys. */
function sortBand(task: BandSortTask, file: string, into: SharedArrayBuffer): SortedRuns & { order: Uint32Array } {
  const n = task.documents;
  const fd = openSync(file, 'r');
  try {
    const read = (visit: (chunk: Uint32Array) => void) => {
      for (let start = 0; start < n; start += CHUNK) {
        const length = Math.min(CHUNK, n - start);
        readAll(fd, new Uint8Array(chunk.buffer, 0, 4 * length), 4 * start);
        visit(chunk.subarray(0, length));
      }
    };
    const began = performance.now();
    const members = bandMembers(read, n, { bucketChunk: task.bucketChunk, into: new Uint32Array(into, 0, n), scratch, passKeys: task.passKeys });
    return { order: members.order, runs: members.runs, members: members.order.length, largeKeys: members.largeKeys, sortMs: performance.now() - began };
  } finally {
    closeSync(fd);
  }
}
