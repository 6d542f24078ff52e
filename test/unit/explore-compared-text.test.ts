// The explorer's texts as compared: the stored field after the normalizer of the params the document was
// signed with (the signer's own normalize), the raw text on request or when the params cannot be read.
import { describe, expect, it } from 'vitest';
import { comparedText, normalizerOf, textView } from '../../src/explore/compared-text.js';
import { createSigner, resolveSignerSettings } from '../../src/signature.js';

const raw = '<p>The  Quick&nbsp;brown <b>FOX</b>,\n\n   jumps &amp; runs: 5€!</p>';

describe('the text as compared', () => {
  it('is what the signer of the stored params normalizes, for each normalizer', () => {
    for (const condenser of ['ws:norm-html:sha1:128', 'ws:norm:mmh3:64', 'white-space-3-grams:none:sha1:32']) {
      const params = resolveSignerSettings({ condenser }).params;
      const signer = createSigner({ condenser });
      const shown = comparedText(raw, params, 'normalized');
      expect(shown.text, condenser).toBe(signer.normalize(raw));
      expect(shown.normalizer).toBe(condenser.split(':')[1]);
      expect(shown.asStored).toBeUndefined();
      // The same text signs to the stored content hash: it is what the signature was computed on.
      expect(signer.signNormalized(shown.text).content_hash).toBe(signer(raw).content_hash);
    }
    const html = comparedText(raw, resolveSignerSettings({}).params, 'normalized').text;
    expect(html).not.toMatch(/[<>&;]|\s{2}|[A-Z]/);
    expect(html.split(' ')).toEqual(expect.arrayContaining(['quick', 'brown', 'fox', 'jumps', 'runs']));
  });

  it('is the stored text in the raw view, and when the params are missing or unreadable (saying why)', () => {
    const params = resolveSignerSettings({}).params;
    expect(comparedText(raw, params, 'raw')).toEqual({ text: raw });
    expect(comparedText(raw, undefined, 'normalized')).toEqual({ text: raw, asStored: expect.stringContaining('no near-dup signature') });
    expect(comparedText(raw, 'ws:norm:sha1:128;seed=1', 'normalized')).toEqual({ text: raw, asStored: expect.stringContaining('"ws:norm:sha1:128;seed=1"') });
    expect(normalizerOf('not params')).toBeUndefined();
  });

  it('reads the view a request names, normalized by default', () => {
    expect(textView(null)).toBe('normalized');
    expect(textView('')).toBe('normalized');
    expect(textView('raw')).toBe('raw');
    expect(() => textView('html')).toThrow(/view must be normalized or raw, got "html"/);
  });
});

describe('the normalizers kept', () => {
  it('are the same function for the same params, and a few at most (params come from documents)', () => {
    const params = (seed: number) => resolveSignerSettings({ seed }).params;
    const first = normalizerOf(params(1));
    expect(normalizerOf(params(1))).toBe(first);
    for (let seed = 2; seed < 20; seed++) expect(normalizerOf(params(seed))?.('<i>A</i>,  B')).toBe('a b');
    // Made again after being let go: an equal function, not the one kept before.
    const again = normalizerOf(params(1));
    expect(again).not.toBe(first);
    expect(again?.('<b>X</b> y')).toBe(first?.('<b>X</b> y'));
  });
});
