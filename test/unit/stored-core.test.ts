// Reading back a `;core=` signature: its values are the MinHash followed by the core field's words, and a
// missing or damaged core field makes the document damaged, named as a damaged MinHash is.
import { describe, expect, it } from 'vitest';
import { coreWords, withCore } from '../../src/sketch/core-similarity.js';
import { templateDigest } from '../../src/sketch/template-tokens.js';
import { createSigner } from '../../src/signature.js';
import { checkStored, readSignature, StoredProblem, storedSignatureOf, storedValues } from '../../src/stored/read.js';
import { coreFields, coreSignature, templateOf } from '../support/core-signatures.js';

const signer = createSigner();
const template = templateOf(signer, 'the shared words of every page of one template here');
const text = 'the shared words of every page of one template here and a page of its own with its name';
const fields = coreFields(signer, text, template);

describe('a stored signature with a core field', () => {
  it('reads the MinHash values followed by the core words', () => {
    const { values, extension } = coreSignature(signer, text, template);
    expect(values).toEqual(signer(text).minhash); // the values are the signer's: its band keys go with them
    const read = readSignature(fields as never, fields.params as string);
    expect(read).not.toBeInstanceOf(StoredProblem);
    expect((read as { values: Uint32Array }).values).toEqual(withCore(values, extension));
    expect(storedValues(fields as never)).toHaveLength(128 + coreWords(128));
  });

  it('the fields made by hand are the signer\'s with that template set', () => {
    const hashes = Uint32Array.from([...template].sort((a, b) => a - b));
    const digest = templateDigest(hashes);
    const real = createSigner({ template: { hashes, digest, share: 0.05, minCount: 3, sample: 100 } });
    const sig = real(text);
    expect(real.settings.params).toBe(`${signer.settings.params};core=${digest}`);
    expect([sig.core, sig.minhash]).toEqual([fields.core, coreSignature(signer, text, template).values]);
  });

  it('a signature just made with core= params compares as it would read back stored', () => {
    const sig = { ...signer(text), core: fields.core as string, minhash: coreSignature(signer, text, template).values };
    expect(storedSignatureOf(sig, fields.params as string).values).toEqual((readSignature(fields as never) as { values: Uint32Array }).values);
    expect(storedSignatureOf(signer(text), signer.settings.params).values).toEqual(signer(text).minhash);
  });

  it('is damaged without its core field, or with one that does not hold the words its params say', () => {
    const cases: Array<[unknown, RegExp]> = [
      [undefined, /^no core$/],
      [null, /^no core$/],
      [42, /^core is number 42, not the 18 bytes of base64 its params \(core=\) say$/],
      ['AAAA', /^core is "AAAA", not the 18 bytes/],
    ];
    for (const [core, reason] of cases) {
      const problem = checkStored({ ...fields, core } as never, ['minhash', 'simhash'], fields.params as string);
      expect(problem, String(core)).toBeInstanceOf(StoredProblem);
      expect((problem as StoredProblem).reason).toMatch(reason);
      expect((problem as StoredProblem).otherParams).toBe(false);
    }
  });

  it('is not asked for where the values are not read, nor of plain params', () => {
    const { core: _, ...without } = fields;
    expect(checkStored(without as never, ['simhash', 'bands'], fields.params as string)).toBeUndefined();
    const plain = { ...without, params: signer.settings.params, minhash: undefined };
    expect(checkStored({ ...plain, minhash: fields.minhash } as never, ['minhash'], signer.settings.params)).toBeUndefined();
  });
});
