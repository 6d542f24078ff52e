// Which _source annotate reads (jobs/source-to-read.ts): the whole source where the text and the signature
// are most of it (the engine hands that out as stored, without parsing it), the filtered fields where other
// fields are large.
import { expect, it } from 'vitest';
import { mostlyNeeded, sourceToRead } from '../../src/jobs/source-to-read.js';

const needed = ['body', 'meta.title', 'near_dup.minhash'];
const text = 'words '.repeat(300);

it('reads the whole source when the needed fields are most of it', () => {
  expect(mostlyNeeded([{ id: 7, body: text, meta: { title: 'A title', lang: 'en' } }], needed)).toBe(true);
  expect(mostlyNeeded([{ 'meta.title': 'flattened', body: text, near_dup: { minhash: 'x'.repeat(700), bands: ['a'] } }], needed)).toBe(true);
});

it('keeps the filter when other fields are large, or there is nothing to judge by', () => {
  const vector = Array.from({ length: 768 }, (_, i) => Math.sin(i));
  expect(mostlyNeeded([{ body: text, embedding: vector }], needed)).toBe(false);
  expect(mostlyNeeded([{ body: 'short', attachment: 'QUJD'.repeat(2000) }], needed)).toBe(false);
  expect(mostlyNeeded([], needed)).toBe(false);
  expect(mostlyNeeded([undefined], needed)).toBe(false);
});

it('judges a sample of the documents the scan will read, in index order', async () => {
  const asked: Record<string, unknown>[] = [];
  const client = (sources: Record<string, unknown>[]) => ({
    search: async (_index: string | undefined, body: Record<string, unknown>) => {
      asked.push(body);
      return { hits: { hits: sources.map((s, i) => ({ _index: 'i', _id: String(i), _source: s })) } } as any;
    },
  });
  const query = { term: { lang: 'en' } };
  expect(await sourceToRead(client([{ body: text }]), 'docs', query, needed)).toBe(true);
  expect(await sourceToRead(client([{ body: 'x', blob: 'y'.repeat(5000) }]), 'docs', query, needed)).toEqual(needed);
  expect(asked[0]).toMatchObject({ query, _source: true, sort: ['_doc'] });
});
