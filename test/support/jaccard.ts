// Exact Jaccard similarity and containment over the very tokens MinHash sees (the signer's tokenizer over
// its normalized text: word 4-shingles by default), the ground truth that near-dup's estimates are checked against.
import type { Signer } from '../../src/signature.js';
import { tokenizer } from '../../src/text/tokenize.js';

type Texts = ReadonlyArray<{ id: string; text: string }>;

/** A measure of two documents by id, from their token sets: f(|A|, |B|, |A ∩ B|). */
function exactMeasureOf(signer: Signer, texts: Texts, measure: (a: number, b: number, shared: number) => number): (a: string, b: string) => number {
  const tokens = tokenizer(signer.settings.spec.tokenizer);
  const sets = new Map(texts.map((d) => [d.id, new Set(tokens(signer.normalize(d.text)))]));
  return (a, b) => {
    const x = sets.get(a)!, y = sets.get(b)!;
    let shared = 0;
    for (const t of x) if (y.has(t)) shared++;
    return measure(x.size, y.size, shared);
  };
}

export function exactJaccardOf(signer: Signer, texts: Texts): (a: string, b: string) => number {
  return exactMeasureOf(signer, texts, (a, b, shared) => shared / (a + b - shared));
}

/** Exact containment C(a, b) = |A ∩ B| / |A| over the same tokens: how much of a is inside b. */
export function exactContainmentOf(signer: Signer, texts: Texts): (a: string, b: string) => number {
  return exactMeasureOf(signer, texts, (a, _b, shared) => (a === 0 ? 0 : shared / a));
}
