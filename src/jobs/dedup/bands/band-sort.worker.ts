// The sorting thread of BandSorter (band-sort.ts), while the caller verifies the bands before: each band's
// hashes read from its file and sorted, its members written to two files with their ranges planned
// (band-members.ts), then, when asked, the task's bands gathered in one pass (band-gather.ts). Its sort's
// arrays are kept from band to band (about 136 MB at SORT_PASS_KEYS, unless one top byte holds more).
import { closeSync, openSync } from 'node:fs';
import { gatherBands } from './band-gather.js';
import { type MembersFiles, MembersOnDisk, type MembersSink, sortedToFiles } from './band-members.js';
import { type BandSortTask, bandMembers, type SortedRuns } from './band-sort.js';
import { readAll } from '../spill/spill-folder.js';

const CHUNK = 1 << 16;
/** The sorted keys and slots of a part, kept from band to band. */
const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0) };
const chunk = new Uint32Array(CHUNK);

/** The worker's task, as the file header says; on a failure nothing of its bands is left on the disk. */
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
