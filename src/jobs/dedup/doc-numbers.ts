// Documents numbered in the order dedup meets them, so that what it keeps about each one (its facts, its
// cluster, its best similarity) lives in typed arrays indexed by that number: a few bytes a document,
// where a map keyed by the id string costs about a hundred. One numbering is shared by the signature
// store and the pair verifier, so every document costs one map entry.

export class DocNumbers {
  private readonly numbers = new Map<string, number>();
  private readonly ids: string[] = [];

  get size(): number {
    return this.ids.length;
  }

  /** The document's number, given it now if it had none. */
  numberOf(id: string): number {
    let n = this.numbers.get(id);
    if (n === undefined) {
      n = this.ids.length;
      this.numbers.set(id, n);
      this.ids.push(id);
    }
    return n;
  }

  /** The document's number, or undefined if it was never met. */
  find(id: string): number | undefined {
    return this.numbers.get(id);
  }

  idOf(n: number): string {
    return this.ids[n];
  }
}

/** A typed array with room for index `n`: the same one, or a copy half as large again (new places hold `fill`). */
export function withRoomFor<T extends Int32Array | Float64Array>(array: T, n: number, fill = 0): T {
  return n < array.length ? array : enlarged(array, Math.max(1024, Math.ceil((n + 1) * 1.5)), fill);
}

/** A copy of a typed array `length` long, the places past the old ones holding `fill`. */
export function enlarged<T extends Int32Array | Uint32Array | Float64Array>(array: T, length: number, fill = 0): T {
  const larger = new (array.constructor as new (length: number) => T)(length);
  larger.set(array);
  if (fill !== 0) larger.fill(fill, array.length);
  return larger;
}
