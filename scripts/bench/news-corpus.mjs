// A short-text corpus that installs with the project: news-like articles of about 2 KB, made by a seeded
// generator (the same texts on every machine), for bench:sign's short-text rows. Real news corpora are not
// shipped by any package the project installs; what matters for signing speed is reproduced instead:
// - length: 1-2.8 KB per article (mean ~2 KB, ~330 words), a headline, a dateline and a few paragraphs;
// - words: drawn by a Zipf law (exponent ~1) over a vocabulary of ~25,000 (the words of the SPDX license
//   texts ranked by their frequency there, then made-up names and terms), so a corpus-wide memo of token
//   hashes sees what it sees on real text: frequent words again and again, a long tail of rare ones;
// - mixed case, digits, amounts, quotations, commas and full stops (work for the normalizer);
// - typographic punctuation (“ ” ’ —) in about a third of the articles, as news sites publish it: those
//   articles are not all ASCII, and take the normalizer's Unicode path;
// - one article in ten a lightly edited copy of another (syndication), as news archives hold them.
import { createRequire } from 'node:module';
import { seededRandom } from './corpus.mjs';

const SYLLABLES = ['ka', 'ro', 'mi', 'tan', 'vel', 'dor', 'si', 'ber', 'lu', 'gen', 'wal', 'ter', 'an', 'ov', 'ski', 'ma', 'ric', 'el', 'son', 'ha'];

/** The vocabulary, most frequent first: license words by frequency, then made-up words. */
function vocabulary(rand) {
  const require = createRequire(import.meta.url);
  const licenses = require('spdx-license-list/spdx-full.json');
  const counts = new Map();
  for (const id of Object.keys(licenses).sort()) {
    for (const w of licenses[id].licenseText.split(/\s+/)) {
      if (!/^[A-Za-z]{1,14}$/.test(w)) continue;
      const lower = w.toLowerCase();
      counts.set(lower, (counts.get(lower) ?? 0) + 1);
    }
  }
  const words = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
  const seen = new Set(words);
  while (words.length < 25_000) {
    let w = '';
    const n = 2 + Math.floor(rand() * 3);
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  return words;
}

/** A sampler of ranks 0..n-1 with P(rank k) proportional to 1/(k+1)^s, by inverting the cumulative sums. */
function zipf(n, s, rand) {
  const cum = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) cum[k] = total += 1 / (k + 1) ** s;
  return () => {
    const x = rand() * total;
    let lo = 0, hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const capital = (w) => w[0].toUpperCase() + w.slice(1);
const CITIES = ['LONDON', 'NEW YORK', 'PARIS', 'TOKYO', 'BERLIN', 'WASHINGTON', 'NAIROBI', 'SYDNEY', 'MADRID', 'TORONTO'];
const SAID = ['said', 'told reporters', 'said in a statement', 'added', 'wrote'];

/**
 * `count` news-like articles ({ id, text }), the same on every machine for a seed. 7,424 by default: as many
 * as the news corpus the issue measured rensa on.
 */
export function newsCorpus(count = 7424, seed = 33) {
  const rand = seededRandom(seed);
  const words = vocabulary(rand);
  const rank = zipf(words.length, 1.0, rand);
  const names = Array.from({ length: 800 }, () => capital(words[2000 + Math.floor(rand() * (words.length - 2000))]));
  const word = () => words[rank()];
  const pick = (list) => list[Math.floor(rand() * list.length)];

  const article = (fancy) => {
    const q = fancy ? ['\u201c', '\u201d', '\u2019'] : ['"', '"', "'"];
    const sentence = () => {
      const n = 8 + Math.floor(rand() * 22);
      const out = [];
      for (let i = 0; i < n; i++) {
        const r = rand();
        if (r < 0.06) out.push(pick(names));
        else if (r < 0.085) out.push(rand() < 0.5 ? String(Math.floor(rand() * 2000)) : `$${(rand() * 100).toFixed(1)} million`);
        else if (r < 0.1 && fancy) out.push('\u2014');
        else out.push(word());
        if (i > 2 && i < n - 2 && rand() < 0.08) out[out.length - 1] += ',';
        if (rand() < 0.015) out[out.length - 1] += `${q[2]}s`;
      }
      out[0] = capital(out[0]);
      const text = `${out.join(' ')}.`;
      return rand() < 0.15 ? `${q[0]}${text}${q[1]} ${pick(names)} ${pick(SAID)}.` : text;
    };
    const target = 1000 + Math.floor(rand() * 1600);
    const headline = Array.from({ length: 5 + Math.floor(rand() * 6) }, () => capital(word())).join(' ');
    let body = `${pick(CITIES)} (${pick(names)}) ${fancy ? '\u2014' : '-'} ${sentence()}`;
    while (body.length < target) {
      const sentences = [];
      for (let n = 1 + Math.floor(rand() * 4); n > 0; n--) sentences.push(sentence());
      body += `\n\n${sentences.join(' ')}`;
    }
    return `${headline}\n\n${body}`;
  };

  const docs = [];
  for (let i = 0; i < count; i++) {
    if (i > 10 && rand() < 0.1) {
      // A syndicated copy: a few words changed, a line added at the end.
      const from = docs[Math.floor(rand() * docs.length)].text.split(' ');
      for (let e = Math.floor(rand() * 8); e > 0; e--) from[Math.floor(rand() * from.length)] = word();
      docs.push({ id: `news-${i}`, text: `${from.join(' ')}\n\n(Reporting by ${pick(names)}; editing by ${pick(names)})` });
    } else {
      docs.push({ id: `news-${i}`, text: article(rand() < 1 / 3) });
    }
  }
  return docs;
}
