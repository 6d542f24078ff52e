// The LSH buckets of one band: the documents sorted by their key's 32-bit hash (ties in slot order), as runs
// of equal hashes of two or more. A least-significant-digit radix sort (four passes of 8 bits, each stable):
// linear in the documents, 16 bytes of scratch a document, and the same order whatever the size, where
// a comparison sort of a hundred million keys would take minutes a band.

/** The documents of one band in bucket order, and its buckets: each run [start, end) of `order` shares a hash. */
export interface BandBuckets {
  /** Slots sorted by (hash as unsigned, slot). */
  order: Uint32Array;
  /** Runs of two or more equal hashes, as pairs [start, end) into `order`. */
  runs: Array<[number, number]>;
}

/** Sorts the slots 0..n-1 by `hashes[slot]` (read as unsigned 32-bit), then by slot, and finds the runs. */
export function bandBuckets(hashes: Int32Array | Uint32Array, n = hashes.length): BandBuckets {
  // The keys travel with their slots, so that every pass reads both in sequence: looking a key up by slot
  // would be a cache miss per document per pass once the band is larger than the processor's caches.
  let keys = Uint32Array.from(new Uint32Array(hashes.buffer, hashes.byteOffset, n));
  let order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  let spareKeys = new Uint32Array(n);
  let spareOrder = new Uint32Array(n);
  const counts = new Uint32Array(256);
  for (let shift = 0; shift < 32; shift += 8) {
    counts.fill(0);
    for (let k = 0; k < n; k++) counts[(keys[k] >>> shift) & 0xff]++;
    // A digit every key shares leaves the order as it is: skip the pass (common in the high digits of few keys).
    if (n === 0 || counts[(keys[0] >>> shift) & 0xff] === n) continue;
    let sum = 0;
    for (let d = 0; d < 256; d++) {
      const c = counts[d];
      counts[d] = sum;
      sum += c;
    }
    for (let k = 0; k < n; k++) {
      const key = keys[k];
      const at = counts[(key >>> shift) & 0xff]++;
      spareKeys[at] = key;
      spareOrder[at] = order[k];
    }
    [keys, spareKeys] = [spareKeys, keys];
    [order, spareOrder] = [spareOrder, order];
  }
  return { order, runs: runsOf(keys) };
}

/** The runs of two or more equal keys among the sorted keys. */
function runsOf(sorted: Uint32Array): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  const n = sorted.length;
  let start = 0;
  for (let k = 1; k <= n; k++) {
    if (k < n && sorted[k] === sorted[start]) continue;
    if (k - start >= 2) runs.push([start, k]);
    start = k;
  }
  return runs;
}
