// The stored-signature layer and the normalizer on any input: reading back never throws (it gives a
// signature or a named reason), and plain text outside tags is kept. Property tests (fast-check) beside
// the cases named in the issue.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSigner } from '../../src/signature.js';
import { StoredLayout } from '../../src/stored/layout.js';
import { checkStored, keyList, readSignature, SIGNATURE_FIELDS, type StoredSignature, StoredProblem, storedIn, storedInDocValues } from '../../src/stored/read.js';
import { nearDupFields } from '../../src/stored/write.js';
import { stripHtml } from '../../src/text/html.js';

const layout = new StoredLayout();
const signer = createSigner();
const good = nearDupFields(signer('the quick brown fox jumps over the lazy dog and runs far away from here'), signer.settings) as unknown as Record<string, unknown>;

describe('reading a stored signature back', () => {
  it('reads back what was written, whole', () => {
    const read = readSignature(storedIn({ near_dup: good }, layout) as never, signer.settings.params);
    expect(read).not.toBeInstanceOf(StoredProblem);
    expect((read as { values: Uint32Array }).values).toEqual(signer('the quick brown fox jumps over the lazy dog and runs far away from here').minhash);
  });

  it('names what is wrong with each damaged field', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ simhash: 'abc' }, /simhash is "abc", not 16 hexadecimal digits/],
      [{ simhash: ['0123456789abcdef'] }, /simhash is a list/],
      [{ minhash: 'AAAA' }, /minhash does not decode/],
      [{ bands: [1, 2] }, /bands is a list .*not a list of strings/],
      [{ bands: ['0:a'] }, /bands holds 1 band keys, its params say 26/],
      [{ token_count: -1 }, /token_count is number -1/],
      [{ token_count: 1.5 }, /token_count is number 1.5/],
      [{ params: 42 }, /params is number 42, not a string/],
      [{ params: 'made by something else' }, /params "made by something else" is not a parameter set/],
      [{ params: 'white-space:norm:sha1:128;seed=1;scheme=affine32;b=16;r=8;simhash=w4m8;k=9' }, /are not ones this version of near-dup reads/],
      [{ sample: ['zz'] }, /sample is .*4 base64url characters/],
      [{ content_hash: {} }, /content_hash is an object/],
    ];
    for (const [change, reason] of cases) {
      const read = readSignature({ ...good, ...change } as never, change.params === undefined ? signer.settings.params : undefined);
      expect(read, JSON.stringify(change)).toBeInstanceOf(StoredProblem);
      expect((read as StoredProblem).reason).toMatch(reason);
    }
    expect((storedIn({ near_dup: [good] }, layout) as StoredProblem).reason).toMatch(/^near_dup is a list .*, not an object$/);
    expect((readSignature(good as never, 'another') as StoredProblem).otherParams).toBe(true);
    // Doc values give one value as it is and several as a list, for the check to refuse.
    expect(storedInDocValues({ 'near_dup.simhash': ['0123456789abcdef', 'ffffffffffffffff'] }, layout, ['simhash']).simhash).toEqual(['0123456789abcdef', 'ffffffffffffffff']);
  });

  it('reads both layouts by their params: hex sample terms with the first, base64url with the current, never crossed', () => {
    const text = 'the quick brown fox jumps over the lazy dog and runs far away from here';
    const first = createSigner({ keyEncoding: 1 });
    const older = nearDupFields(first(text), first.settings);
    expect(readSignature(older as never)).not.toBeInstanceOf(StoredProblem);
    expect(older.params).not.toContain(';k=');
    expect((older.sample as string[]).every((t: string) => /^[0-9a-f]{8}$/.test(t))).toBe(true);
    const crossed = readSignature({ ...older, params: signer.settings.params } as never);
    expect((crossed as StoredProblem).reason).toMatch(/sample is .*4 base64url characters/);
  });

  it('reads the SimHash blocks and the sample as lists or as one string of terms, the same signature', () => {
    const text = 'the quick brown fox jumps over the lazy dog and runs far away from here, and back again to the start';
    const sig = signer(text);
    const lists = nearDupFields(sig, signer.settings, new Date(0), 'lists');
    const joined = nearDupFields(sig, signer.settings, new Date(0), 'joined');
    expect(Array.isArray(lists.sample) && Array.isArray(lists.simhash_blocks)).toBe(true);
    expect(joined.sample).toBe(sig.sample.join(' '));
    expect(joined.simhash_blocks).toBe(sig.simhash_blocks.join(' '));
    const a = readSignature(lists as never) as StoredSignature;
    const b = readSignature(joined as never) as StoredSignature;
    expect(b).toEqual(a);
    expect(b.sample).toEqual(sig.sample);
    expect(b.blocks).toEqual(sig.simhash_blocks);
    // One term short, or a term of the other layout inside the string, is refused as a list would be.
    const blocks = sig.simhash_blocks.slice(1).join(' ');
    expect((readSignature({ ...joined, simhash_blocks: blocks } as never) as StoredProblem).reason).toMatch(/simhash_blocks holds \d+ SimHash blocks, its params say/);
    expect((readSignature({ ...joined, sample: `${joined.sample} 0123abcd` } as never) as StoredProblem).reason).toMatch(/sample is .*4 base64url characters/);
    expect(keyList('  a  b\tc ')).toEqual(['a', 'b', 'c']);
    expect(keyList('')).toEqual([]);
    expect(keyList(7)).toBeUndefined();
  });

  it('never throws, whatever the stored object holds: a signature or a reason', () => {
    const value = fc.oneof(fc.jsonValue(), fc.base64String(), fc.constantFrom(...Object.values(good)));
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...SIGNATURE_FIELDS, 'near_dup'), value), fc.option(fc.string()), (fields, expected) => {
        const source = { near_dup: { ...good, ...fields } };
        const raw = storedIn(source, layout);
        if (raw instanceof StoredProblem) return;
        const read = readSignature(raw, expected ?? undefined);
        const checked = checkStored(raw, SIGNATURE_FIELDS, expected ?? undefined);
        expect(read instanceof StoredProblem).toBe(checked !== undefined);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (anything) => {
        storedIn({ near_dup: anything }, layout);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the HTML normalizer on plain text', () => {
  it('keeps a < that opens no tag closed by >, so different texts stay different', () => {
    expect(stripHtml('if a<b then X')).toBe('if a<b then X');
    expect(stripHtml('if a<b then X')).not.toBe(stripHtml('if a<b then Y'));
    expect(signer('if a<b then X').content_hash).not.toBe(signer('if a<b then Y').content_hash);
    expect(stripHtml('<p>one</p><p>two &amp; three</p><!-- a < b -->')).toBe('\n\none\n\n\n\ntwo & three\n\n');
  });

  it('keeps a tag whose name is not HTML\'s as text: placeholders, generics, addresses, reprs', () => {
    for (const text of ['git add <pathspec> now', 'List<String> names', 'From: Jane <jane@example.com>', "dict_type=<class 'dict'>", '</file>']) expect(stripHtml(text)).toBe(text);
    expect(signer('usage: cp <from> <to>').content_hash).not.toBe(signer('usage: cp <to> <from>').content_hash);
    // Custom elements and prefixed ones (Word's HTML) are markup, as HTML's own are, in any case.
    expect(stripHtml('<o:p>word</o:p> <my-widget>w</my-widget> <DIV>x</Div>')).toBe('word w \n\nx\n\n');
    // Word's and Outlook's <xml> islands, and the newest of HTML's elements, are markup too.
    expect(stripHtml('<xml><o:OfficeDocumentSettings><o:AllowPNG/></o:OfficeDocumentSettings></xml><p>Body</p>')).toBe('\n\nBody\n\n');
    expect(stripHtml('<select><button><selectedcontent></selectedcontent></button><option>One</select>')).toBe('\n\nOne');
  });

  it('keeps what follows an element it drops (script, object, ...) when nothing closes that element', () => {
    const repr = (tail: string) => `interpolation=<object object at 0x7f...>, converters=<object object at 0x7f...>) ${tail}`;
    expect(stripHtml(repr('Initialize self.'))).toBe('interpolation=, converters=) Initialize self.');
    expect(signer(repr('alpha beta gamma delta')).content_hash).not.toBe(signer(repr('epsilon zeta eta theta')).content_hash);
    expect(stripHtml('run <script> to build it')).toBe('run  to build it');
    expect(stripHtml('<svg><title>t</title><script>x')).toBe('\n\nt\n\nx');
    // Closed, by its end tag or by one that implies it, it is dropped with its content as before.
    expect(stripHtml('<script>var a = 1</script>after <template>t</template>')).toBe('after ');
    expect(stripHtml('<html><head><title>T</title><body>x</body>')).toBe('\n\n\n\nx\n\n');
  });

  it('keeps the text of a <script>, <style>, <xmp>, ... it keeps as it was, without the escapes it read it with', () => {
    // Their content is raw text, where `&lt;` is not read back as `<`.
    expect(stripHtml('run <script> then if a<b then c')).toBe('run  then if a<b then c');
    expect(stripHtml('run <style> then List<String> names')).toBe('run  then List<String> names');
    expect(stripHtml('<xmp>List<String> and a<b</xmp> after')).toBe('List<String> and a<b after');
    expect(stripHtml('<plaintext>x<y>z a<b')).toBe('x<y>z a<b');
  });

  it('ends <head> where a browser does, at the first element that has no place in it (a page without <body>)', () => {
    expect(stripHtml('<html><head><title>T</title><script>s()</script><div>content</div></html>').trim()).toBe('content');
    expect(stripHtml('<head><meta charset=utf-8><title>T</title><p>body text').trim()).toBe('body text');
    expect(stripHtml('<head><noscript><link rel=x></noscript><style>p{}</style><h1>Head</h1>line').trim()).toBe('Head\n\nline');
    // What a <head> may hold keeps it open: closed, it goes with its content; never closed, it stays text.
    expect(stripHtml('<head><base href=x><link rel=x><meta name=a><title>T</title><template>t</template></head><body>x').trim()).toBe('x');
    expect(stripHtml('the <head> element')).toBe('the  element');
    // Text ends it too, outside its <title>: a plain text that names the element keeps its words.
    expect(stripHtml('put the <head> tag before <b>any</b> text')).toBe('put the  tag before any text');
    expect(stripHtml('<head>\n<title>T</title>\n</head>x').trim()).toBe('x');
  });

  it('drops an element closed inside one that is never closed, with its content: the code of a script is no text', () => {
    expect(stripHtml('<object>a <script>evil()</script> b')).toBe('a  b');
    expect(stripHtml('run <object> then <style>p { color: red }</style> text')).toBe('run  then  text');
    const page = '<html><head><title>T</title><script>var tracking = 1;</script><style>p { color: red }</style><p>Page text';
    expect(stripHtml(page)).not.toMatch(/tracking|color/);
  });

  it('keeps any text without HTML\'s tags as it is', () => {
    const plain = fc.string({ unit: fc.constantFrom('x', 'y', ' ', '<', '>', '</', '\n', '1', 'é', '<x>', '<file>', '</yy>') });
    fc.assert(
      fc.property(plain, (text) => {
        expect(stripHtml(text)).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps any text without markup as it is', () => {
    const plain = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '<', '\n', 'x', '1', '/', '!', 'é') });
    fc.assert(
      fc.property(plain, (text) => {
        expect(stripHtml(text)).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });
});
