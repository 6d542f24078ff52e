// The pairs the final step of a split dedup gathers from the shares, by document number, each once: a pair
// two shares both found (a pair that met in another share's large key first) is kept the first time and
// counted, and a copy that disagrees about its similarity is told apart. Typed columns and an open-addressing
// table of (smaller number, larger number): about 45 bytes a pair, no object per pair. Pure.
import { enlarged, mixed } from '../documents/doc-numbers.js';

/**
 * The gathered pairs by document number, each kept once, in typed columns (no object a pair); a copy that disagrees
 * about its similarity is told apart.
 */
export class PairList {
  na = new Int32Array(1024);
  nb = new Int32Array(1024);
  jaccard = new Float64Array(1024);
  hamming = new Uint8Array(1024);
  /** Each pair's page, as a place in the caller's list of pages (to name it when a check fails). */
  page = new Int32Array(1024);
  count = 0;
  /** Pairs given again (the same documents, the same similarity and distance). */
  duplicates = 0;
  /** Index + 1 of each pair in its place (0: empty); a power of two, at most half full. */
  private table = new Int32Array(4096);

  /**
   * Adds a pair (numbers in either order): 'added', 'duplicate' (the same pair again, dropped), or the
   * place of the pair it disagrees with (the same documents, another similarity or distance).
   */
  add(x: number, y: number, jaccard: number, hamming: number, page: number): 'added' | 'duplicate' | { disagrees: number } {
    const [a, b] = x < y ? [x, y] : [y, x];
    const place = this.placeOf(a, b);
    const found = this.table[place] - 1;
    if (found >= 0) {
      if (this.jaccard[found] === jaccard && this.hamming[found] === hamming) {
        this.duplicates++;
        return 'duplicate';
      }
      return { disagrees: found };
    }
    this.append(a, b, jaccard, hamming, page);
    this.table[place] = this.count;
    if (this.count * 2 > this.table.length) this.rehash();
    return 'added';
  }

  private append(a: number, b: number, jaccard: number, hamming: number, page: number): void {
    if (this.count === this.na.length) {
      const length = this.count * 2;
      this.na = enlarged(this.na, length);
      this.nb = enlarged(this.nb, length);
      this.jaccard = enlarged(this.jaccard, length);
      this.page = enlarged(this.page, length);
      const wider = new Uint8Array(length);
      wider.set(this.hamming);
      this.hamming = wider;
    }
    const i = this.count++;
    this.na[i] = a;
    this.nb[i] = b;
    this.jaccard[i] = jaccard;
    this.hamming[i] = hamming;
    this.page[i] = page;
  }

  private placeOf(a: number, b: number): number {
    const mask = this.table.length - 1;
    for (let place = hashOf(a, b) & mask; ; place = (place + 1) & mask) {
      const i = this.table[place] - 1;
      if (i < 0 || (this.na[i] === a && this.nb[i] === b)) return place;
    }
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let i = 0; i < this.count; i++) {
      let place = hashOf(this.na[i], this.nb[i]) & mask;
      while (table[place] !== 0) place = (place + 1) & mask;
      table[place] = i + 1;
    }
    this.table = table;
  }
}

/** The hash of a pair of numbers (its table's place in its low bits). */
export function hashOf(a: number, b: number): number {
  return mixed(Math.imul(a, 0x9e3779b1) ^ b);
}
