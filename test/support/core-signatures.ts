// Stored near-dup fields of a `;core=` params made by hand, with any digest: the signer's ordinary fields,
// its params with `;core=DIGEST`, the MinHash of every token with its template bits (signWithCore: the same
// values as the signer's, so the band keys still go with them) and the core field. What a signer with that
// template set writes (test/unit/stored-core.test.ts holds them equal).
import { encodeCore, signWithCore } from '../../src/sketch/core-similarity.js';
import { serializeLeanMinhash } from '../../src/sketch/lean-minhash.js';
import { minhashPermutations } from '../../src/sketch/minhash.js';
import type { Signer } from '../../src/signature.js';
import { nearDupFields } from '../../src/stored/write.js';

export const CORE_DIGEST = '0123456789ab';

/** The template tokens of a text, as `signer` hashes them. */
export function templateOf(signer: Signer, text: string): Set<number> {
  return new Set(signer.tokenHashes(text));
}

/** A text's values and extension under `template` (the tokens of `template` marked), as signWithCore gives them. */
export function coreSignature(signer: Signer, text: string, template: ReadonlySet<number>): { values: Uint32Array; extension: Uint32Array } {
  const { spec, seed, scheme } = signer.settings;
  const hashes = [...signer.tokenHashes(text)];
  const own = hashes.filter((h) => !template.has(h));
  const ordered = Uint32Array.from([...own, ...hashes.filter((h) => template.has(h))]);
  return signWithCore(minhashPermutations(spec.numPerm, seed, scheme), ordered, own.length, ordered.length);
}

/** The near-dup fields of `text` signed with its template bits, under params `${params};core=DIGEST`. */
export function coreFields(signer: Signer, text: string, template: ReadonlySet<number>, digest = CORE_DIGEST): Record<string, unknown> {
  const fields = nearDupFields(signer(text), signer.settings) as unknown as Record<string, unknown>;
  const { values, extension } = coreSignature(signer, text, template);
  const minhash = Buffer.from(serializeLeanMinhash({ seed: signer.settings.seed, scheme: signer.settings.scheme, values })).toString('base64');
  return { ...fields, params: `${signer.settings.params};core=${digest}`, minhash, core: encodeCore(extension) };
}
