// The sorting thread of band-sort.ts (BandSorter, a piscina worker), while the caller verifies the bands before them:
// each band's hashes read from the spill's file of that band and sorted into buckets (band-sort.ts); the
// slots of the documents in a bucket (the band's members), in bucket order, and their buckets written to two
// files of the band (band-members-file.ts) with their ranges planned, the ranges and the hashes of the keys
// too large for one bucket chunk handed back; then, when asked, the bands' members gathered into range files
// in bucket order, all of the task's bands in one pass over the records (band-gather.ts).
// The worker sorts a part of the key space at a time (bandMembers) and keeps its arrays of sorted keys and
// slots from band to band (8 bytes a key of the largest part and of its largest slice: about 136 MB unless
// one top byte holds more); the caller holds one range of members at a time, read back from the files.
import { closeSync, openSync } from 'node:fs';
import { gatherBands } from './band-gather.js';
import { type MembersFiles, MembersOnDisk, sortedToFiles } from './band-members-file.js';
import type { MembersSink } from './band-ranges.js';
import { type BandSortTask, bandMembers, type SortedRuns } from './band-sort.js';
import { readAll } from '../spill/spill-folder.js';

const CHUNK = 1 << 16;
/** The sorted keys and slots of a part, kept from band to band. */
const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0) };
const chunk = new Uint32Array(CHUNK);

/**
 * The worker's task: its bands sorted into buckets from their files, their members written to files with their ranges,
 * then gathered when asked; on a failure nothing of its bands is left on the disk.
 */
export default function sortBands(task: BandSortTask): SortedRuns[] {
  const sorted: Array<SortedRuns & { files: MembersFiles }> = [];
  const readers: MembersOnDisk[] = [];
  try {
    for (const [k, { file, members }] of task.bands.entries()) sorted.push({ ...sortBand(task, file, members, task.gather?.[k]?.rangeMembers ?? task.windowMembers), files: members });
    const toGather = sorted.flatMap((band, k) => {
      const gather = task.gather?.[k];
      if (!gather) return [];
      readers.push(new MembersOnDisk(band.files, band.ranges, band.members));
      return [{ task: gather, members: readers[readers.length - 1] }];
    });
    const began = performance.now();
    gatherBands(toGather);
    const gatherMs = performance.now() - began;
    return sorted.map(({ files: _, ...band }, k) => ({ ...band, gatherMs: k === 0 ? gatherMs : 0 }));
  } catch (err) {
    // (Nothing of the task's bands is left on the disk: the caller never learns of their files.)
    for (const { files, ranges, members } of sorted) new MembersOnDisk(files, ranges, members).remove();
    throw err;
  } finally {
    // (The files stay for the caller; the worker's descriptors go, or the disk would keep every band's
    // files, removed by the caller, until the worker ends.)
    for (const reader of readers) reader.close();
  }
}

/** One band's members in bucket order, written to its files with their ranges (of `target` members) planned; its large keys. */
function sortBand(task: BandSortTask, file: string, files: MembersFiles, target: number): SortedRuns {
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
    const sort = (sink: MembersSink) => bandMembers(read, n, { bucketChunk: task.bucketChunk, sink, scratch, passKeys: task.passKeys });
    const { members, sorted: largeKeys } = sortedToFiles(files, Math.max(1, target), sort);
    return { ranges: [...members.ranges], members: members.members, largeKeys, sortMs: performance.now() - began };
  } finally {
    closeSync(fd);
  }
}
