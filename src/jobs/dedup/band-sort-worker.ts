// A band's sort on a core of its own (a piscina worker), while the caller verifies the band before it: the
// band's hashes read from the spill's file of that band and sorted into buckets (band-sort.ts); the slots of
// the documents in a bucket (the band's members), in bucket order, written into shared memory the caller gave
// (one of two it alternates between), the runs and the hashes of the keys too large for one bucket chunk
// handed back; then, when asked, the members gathered into range files in bucket order (band-gather.ts).
// The worker sorts a part of the key space at a time (bandMembers) and keeps its arrays of sorted keys and
// slots from band to band (8 bytes a key of the largest part and of its largest slice: about 136 MB unless
// one top byte holds more); the caller holds only the members (a tenth of the documents or so), of two bands.
import { closeSync, openSync } from 'node:fs';
import { type BandRange, type GatherTask, gatherBand } from './band-gather.js';
import { bandMembers } from './band-sort.js';
import { readAll } from './spill-folder.js';

export interface BandSortTask {
  /** The spill's file of the band's hashes (4 bytes a document, in slot order). */
  file: string;
  documents: number;
  /** Documents of one key verified at once: a key held by more is a large key. */
  bucketChunk: number;
  /** Where the members' slots in bucket order go (room for every document, shared with the caller). */
  order: SharedArrayBuffer;
  /** Keys sorted at once (default SORT_PASS_KEYS). */
  passKeys?: number;
  /** When given, the band's members gathered into range files in bucket order once it is sorted. */
  gather?: GatherTask;
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
  /** Milliseconds spent sorting the band, and gathering it. */
  sortMs?: number;
  gatherMs?: number;
}

const CHUNK = 1 << 16;
/** The sorted keys and slots of a part, kept from band to band. */
const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0) };
const chunk = new Uint32Array(CHUNK);

export default function sortBand(task: BandSortTask): SortedRuns {
  const n = task.documents;
  const fd = openSync(task.file, 'r');
  try {
    const read = (visit: (chunk: Uint32Array) => void) => {
      for (let start = 0; start < n; start += CHUNK) {
        const length = Math.min(CHUNK, n - start);
        readAll(fd, new Uint8Array(chunk.buffer, 0, 4 * length), 4 * start);
        visit(chunk.subarray(0, length));
      }
    };
    const began = performance.now();
    const members = bandMembers(read, n, { bucketChunk: task.bucketChunk, into: new Uint32Array(task.order, 0, n), scratch, passKeys: task.passKeys });
    const sorted = performance.now();
    const ranges = task.gather && gatherBand(task.gather, members.order, members.runs);
    const gatherMs = performance.now() - sorted;
    return { runs: members.runs, members: members.order.length, largeKeys: members.largeKeys, ranges, sortMs: sorted - began, gatherMs };
  } finally {
    closeSync(fd);
  }
}
