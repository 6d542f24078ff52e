// Exact Jaccard similarity and containment over the very tokens MinHash sees (the default tokenizer: white space of the
// normalized text), the ground truth that near-dup's estimates are checked against.
import type { Signer } from '../../src/signature.js';

export function exactJaccardOf(signer: Signer, texts: ReadonlyArray<{ id: string; text: string }>): (a: string, b: string) => number {
  const sets = new Map(texts.map((d) => [d.id, new Set(signer.normalize(d.text).split(' ').filter(Boolean))]));
  return (a, b) => {
    const x = sets.get(a)!, y = sets.get(b)!;
    let shared = 0;
    for (const t of x) if (y.has(t)) shared++;
    return shared / (x.size + y.size - shared);
  };
}

/** Exact containment C(a, b) = |A ∩ B| / |A| over the same tokens: how much of a is inside b. */
export function exactContainmentOf(signer: Signer, texts: ReadonlyArray<{ id: string; text: string }>): (a: string, b: string) => number {
  const sets = new Map(texts.map((d) => [d.id, new Set(signer.normalize(d.text).split(' ').filter(Boolean))]));
  return (a, b) => {
    const x = sets.get(a)!, y = sets.get(b)!;
    let shared = 0;
    for (const t of x) if (y.has(t)) shared++;
    return x.size === 0 ? 0 : shared / x.size;
  };
}
