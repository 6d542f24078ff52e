// The LSH buckets of one band: the documents sorted by their key's 32-bit hash (ties in slot order), as runs
// of equal hashes of two or more. A radix sort, linear in the documents, the same order whatever the size
// (a comparison sort of a hundred million keys would take minutes a band): one pass on the top 8 bits
// spreads the keys, with their slots, into 256 slices; each slice is then sorted on its low 24 bits by
// stable passes of 8 bits through scratch the size of the largest slice. The band's hashes are read twice
// in slot order, a chunk at a time (from the disk, or from memory), never held as a column. So a band of n
// documents takes 8 bytes a document (its sorted keys and slots, reused band after band) and scratch of
// about n/256 for keys that spread, where sorting it whole took 16 (and its column another 4).

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
}

/** Sorts the slots 0..n-1 by their hash (read as unsigned 32-bit), then by slot, and finds the runs. */
export function bandBuckets(hashes: Int32Array | Uint32Array | BandSource, n = typeof hashes === 'function' ? 0 : hashes.length, scratch?: BandScratch): BandBuckets {
  const source: BandSource = typeof hashes === 'function' ? hashes : (visit) => visit(new Uint32Array(hashes.buffer, hashes.byteOffset, n));
  if (scratch && scratch.keys.length < n) [scratch.keys, scratch.order] = [new Uint32Array(n), new Uint32Array(n)];
  const keys = scratch ? scratch.keys.subarray(0, n) : new Uint32Array(n);
  const order = scratch ? scratch.order.subarray(0, n) : new Uint32Array(n);
  const sliceStarts = spreadByTopByte(source, keys, order);
  let largest = 0;
  for (let d = 0; d < 256; d++) largest = Math.max(largest, sliceStarts[d + 1] - sliceStarts[d]);
  const spare = { keys: new Uint32Array(largest), order: new Uint32Array(largest) };
  for (let d = 0; d < 256; d++) sortLowBits(keys.subarray(sliceStarts[d], sliceStarts[d + 1]), order.subarray(sliceStarts[d], sliceStarts[d + 1]), spare);
  return { order, keys, runs: runsOf(keys) };
}

/** Keys and their slots placed by their top 8 bits, in slot order within each (stable); where each slice starts. */
function spreadByTopByte(source: BandSource, keys: Uint32Array, order: Uint32Array): Uint32Array {
  const starts = new Uint32Array(257);
  let seen = 0;
  source((chunk) => {
    for (let k = 0; k < chunk.length; k++) starts[(chunk[k] >>> 24) + 1]++;
    seen += chunk.length;
  });
  if (seen !== keys.length) throw new Error(`a band held ${seen} hashes where ${keys.length} documents were expected`);
  for (let d = 0; d < 256; d++) starts[d + 1] += starts[d];
  const next = starts.slice(0, 256);
  let slot = 0;
  source((chunk) => {
    for (let k = 0; k < chunk.length; k++, slot++) {
      const key = chunk[k];
      const at = next[key >>> 24]++;
      keys[at] = key;
      order[at] = slot;
    }
  });
  return starts;
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
      if (count + 2 > runs.length) {
        const larger = new Uint32Array(runs.length * 2);
        larger.set(runs);
        runs = larger;
      }
      runs[count++] = start;
      runs[count++] = k;
    }
    start = k;
  }
  return runs.slice(0, count);
}

/**
 * The members of a sorted band only (the documents in a run), one run after the other in bucket order,
 * copied into `into`; the runs as places among them. The buckets and their order are the band's.
 */
export function membersOnly(order: Uint32Array, runs: Uint32Array, into: Uint32Array): { order: Uint32Array; runs: Uint32Array } {
  const placed = new Uint32Array(runs.length);
  let at = 0;
  for (let r = 0; r < runs.length; r += 2) {
    into.set(order.subarray(runs[r], runs[r + 1]), at);
    placed[r] = at;
    at += runs[r + 1] - runs[r];
    placed[r + 1] = at;
  }
  return { order: into.subarray(0, at), runs: placed };
}
