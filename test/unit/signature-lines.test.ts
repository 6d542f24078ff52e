// The byte writer of `sign --jsonl` against JSON.stringify of the same line.
import { describe, expect, it } from 'vitest';
import { createSigner, signatureToJson } from '../../src/signature.js';
import { SignatureLines } from '../../src/signing/signature-lines.js';

describe('SignatureLines', () => {
  it('writes, line after line, the UTF-8 of JSON.stringify of each line, for every kind of id and empty signatures', () => {
    const texts = ['The quick brown fox jumps over the lazy dog.', 'Ünïcödé wörds, café, 東京 and 🙂', 'one', '', '   ', 'w x '.repeat(300)];
    const ids = [undefined, null, 0, 7, -1.5, 4294967296, 'doc-1', 'quote " backslash \\ line\n 東京 🙂', true, { nested: [1, 'a'] }, [1, 2]];
    for (const options of [{}, { keyEncoding: 1 as const }, { containmentSample: 0 }, { condenser: '3-grams:norm:mmh3:16' }, { condenser: 'ws:none:crc32:300' }]) {
      const sign = createSigner(options);
      const out = new SignatureLines();
      let expected = '';
      for (const text of texts) {
        const sig = sign(text);
        for (const id of ids) {
          out.signature(sig, sign.settings.params, id);
          expected += `${JSON.stringify({ id, ...signatureToJson(sig), params: sign.settings.params })}\n`;
        }
      }
      out.json({ id: 'x', line: 3, error: 'not valid JSON: é' });
      expected += `${JSON.stringify({ id: 'x', line: 3, error: 'not valid JSON: é' })}\n`;
      expect(Buffer.from(out.bytes()).toString('utf8')).toBe(expected);
    }
  });

  it('writes every whole number below 2^32 as JSON does, at each digit count', () => {
    const out = new SignatureLines();
    const sign = createSigner({ condenser: 'ws:none:sha1:24' });
    const sig = sign('a b c');
    const values = [0, 1, 9, 10, 99, 100, 12345, 99999, 100000, 999999, 1000000, 9999999, 10000000, 99999999, 100000000, 999999999, 1000000000, 4294967295];
    sig.minhash = Uint32Array.from({ length: 24 }, (_, i) => values[i % values.length]);
    out.signature(sig, 'p');
    expect(JSON.parse(Buffer.from(out.bytes()).toString()).minhash).toEqual(Array.from(sig.minhash));
  });
});
