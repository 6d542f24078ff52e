// Texts for integration tests. The main one installs with the project: the license texts that the
// spdx-license-list package ships (real near-duplicates already: BSD and MIT variants, GPL versions),
// each taken as the first version of a family and given later versions by seeded edits, from a word
// changed here and there to half rewritten, plus partial copies (a passage of one text inside another).
// The shared PEP revisions corpus is an optional, larger extra, used when NEAR_DUP_CORPUS names it or it
// sits beside the checkout (../shared/corpora).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { seededRandom } from './seeded-random.js';

export { seededRandom };

export interface CorpusDoc {
  id: string;
  /** Documents of one family are versions of one text. */
  family: string;
  version: number;
  date: string;
  text: string;
}

export interface Corpus {
  name: string;
  docs: CorpusDoc[];
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const PEP_CORPUS = process.env.NEAR_DUP_CORPUS ?? path.resolve(here, '../../../shared/corpora/peps-revisions.jsonl.gz');


/**
 * A new version of a text: each word is, with probability `rate`, deleted, replaced by a word of
 * `vocabulary`, or followed by one. Lines are kept, so the text still reads as the same document.
 */
export function editText(text: string, rate: number, random: () => number, vocabulary: readonly string[]): string {
  const pick = () => vocabulary[Math.floor(random() * vocabulary.length)];
  return text
    .split('\n')
    .map((line) =>
      line
        .split(' ')
        .flatMap((word) => {
          if (word === '' || random() >= rate) return [word];
          const r = random();
          return r < 1 / 3 ? [] : r < 2 / 3 ? [pick()] : [word, pick()];
        })
        .join(' '),
    )
    .join('\n');
}

/** How much each later version of a family is edited: near-copies, close and distant revisions. */
const VERSION_RATES = [0.01, 0.05, 0.12, 0.25, 0.45];

let licenses: Array<{ id: string; text: string }> | undefined;

function licenseTexts(): Array<{ id: string; text: string }> {
  if (!licenses) {
    const require = createRequire(import.meta.url);
    const full = require('spdx-license-list/spdx-full.json') as Record<string, { licenseText: string }>;
    licenses = Object.entries(full)
      .map(([id, l]) => ({ id, text: l.licenseText }))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }
  return licenses;
}

/**
 * `families` license texts taken evenly across the list, each with up to five edited versions (how many,
 * and which rates, drawn from the seed), and a partial copy now and then: a version that is another
 * family's text with a passage of this one inside. Dates grow with the version.
 */
export function fixtureSample(families: number, options: { seed?: number; minChars?: number; maxChars?: number } = {}): CorpusDoc[] {
  const random = seededRandom(options.seed ?? 20261123);
  const all = licenseTexts().filter((l) => l.text.length >= (options.minChars ?? 600) && l.text.length <= (options.maxChars ?? 20_000));
  const step = Math.max(1, Math.floor(all.length / families));
  const chosen = all.filter((_, i) => i % step === 0).slice(0, families);
  const vocabulary = [...new Set(chosen.flatMap((l) => l.text.split(/\s+/)).filter((w) => /^[A-Za-z]{3,}$/.test(w)))].sort();
  const docs: CorpusDoc[] = [];
  chosen.forEach((license, f) => {
    const family = license.id;
    const day = (version: number) => new Date(Date.UTC(2020, 0, 1 + f * 7 + version)).toISOString();
    docs.push({ id: `${family}@0`, family, version: 0, date: day(0), text: license.text });
    const versions = Math.floor(random() * (VERSION_RATES.length + 1));
    for (let v = 1; v <= versions; v++) {
      const rate = VERSION_RATES[Math.floor(random() * VERSION_RATES.length)];
      docs.push({ id: `${family}@${v}`, family, version: v, date: day(v), text: editText(license.text, rate, random, vocabulary) });
    }
    if (f % 5 === 4) {
      // A partial copy: a passage of this text quoted inside the text of the family before it.
      const host = chosen[f - 1].text.split('\n');
      const lines = license.text.split('\n');
      const passage = lines.slice(0, Math.max(1, Math.ceil(lines.length / 2))).join('\n');
      const at = Math.floor(random() * host.length);
      const text = [...host.slice(0, at), passage, ...host.slice(at)].join('\n');
      docs.push({ id: `${family}@quoted`, family, version: versions + 1, date: day(versions + 1), text });
    }
  });
  return docs;
}

/** Whether the optional PEP corpus is here. */
export function pepCorpusPresent(): boolean {
  return existsSync(PEP_CORPUS);
}

let peps: Array<{ id: string; pep: number; version: number; date: string; text: string }> | undefined;

/** Every revision of `count` PEPs taken evenly across the optional PEP corpus. */
export function pepSample(count: number, maxChars = 60_000): CorpusDoc[] {
  peps ??= gunzipSync(readFileSync(PEP_CORPUS)).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const all = peps.filter((d) => d.text.length <= maxChars);
  const numbers = [...new Set(all.map((d) => d.pep))].sort((a, b) => a - b);
  const step = Math.max(1, Math.floor(numbers.length / count));
  const chosen = new Set(numbers.filter((_, i) => i % step === 0).slice(0, count));
  return all.filter((d) => chosen.has(d.pep)).map((d) => ({ id: d.id, family: `pep-${d.pep}`, version: d.version, date: d.date, text: d.text }));
}

let noted = false;

/**
 * The corpora a test file runs on: the installed fixtures always, the PEP corpus too when present.
 * When it is absent, one line says so (nothing is skipped in silence).
 */
export function testCorpora(fixtureFamilies: number, pepCount: number): Corpus[] {
  const corpora: Corpus[] = [{ name: 'fixtures', docs: fixtureSample(fixtureFamilies) }];
  if (pepCorpusPresent()) corpora.push({ name: 'peps', docs: pepSample(pepCount) });
  else if (!noted) {
    noted = true;
    process.stderr.write(`[corpus] the optional PEP corpus is not at ${PEP_CORPUS}: the tests run on the installed fixtures only (set NEAR_DUP_CORPUS to add it)\n`);
  }
  return corpora;
}

/** OCR-like damage: now and then a letter read as a look-alike, or a word split in two. */
export function ocrNoise(text: string, rate: number, random: () => number): string {
  const lookAlike: Record<string, string> = { l: '1', o: '0', e: 'c', i: 'l', m: 'rn', S: '5', B: '8' };
  return text
    .split(' ')
    .map((word) => {
      if (word.length < 3 || random() >= rate) return word;
      const at = Math.floor(random() * word.length);
      const swap = lookAlike[word[at]];
      return swap ? word.slice(0, at) + swap + word.slice(at + 1) : `${word.slice(0, at)} ${word.slice(at)}`;
    })
    .join(' ');
}

/**
 * Partial copies planted among `docs`, in turn: a passage of 10% to 90% of a document (`~excerpt-NN`),
 * a whole document quoted inside another (`~in~HOST`), and a passage read back with OCR-like damage
 * (`~ocr`). Sources are documents of at least `minWords` words, taken evenly.
 */
export function partialCopies(docs: readonly CorpusDoc[], count: number, options: { seed?: number; minWords?: number } = {}): CorpusDoc[] {
  const random = seededRandom(options.seed ?? 11);
  const sources = docs.filter((d) => d.text.split(/\s+/).length >= (options.minWords ?? 300));
  const shares = [0.1, 0.3, 0.5, 0.7, 0.9];
  const out: CorpusDoc[] = [];
  for (let i = 0; i < count && sources.length > 1; i++) {
    const source = sources[Math.floor((i * sources.length) / count)];
    const words = source.text.split(' ');
    const passage = (share: number) => {
      const length = Math.max(1, Math.round(words.length * share));
      const start = Math.floor(random() * (words.length - length + 1));
      return words.slice(start, start + length).join(' ');
    };
    const copy = (suffix: string, text: string): CorpusDoc => ({ ...source, id: `${source.id}~${suffix}`, version: source.version + 100, text });
    if (i % 3 === 0) {
      const share = shares[(i / 3) % shares.length];
      out.push(copy(`excerpt-${Math.round(share * 100)}`, passage(share)));
    } else if (i % 3 === 1) {
      const host = sources[(sources.indexOf(source) + 1 + Math.floor(random() * (sources.length - 1))) % sources.length];
      const lines = host.text.split('\n');
      const at = Math.floor(random() * lines.length);
      out.push(copy(`in~${host.id}`, [...lines.slice(0, at), source.text, ...lines.slice(at)].join('\n')));
    } else {
      out.push(copy('ocr', ocrNoise(passage(0.5), 0.08, random)));
    }
  }
  return out;
}
