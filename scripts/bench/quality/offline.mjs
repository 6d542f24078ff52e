// bench:quality without an engine: near-dup's own signer, comparer and cut (dist/) on a labelled corpus,
// scored with the same truth and measures, in seconds a corpus where the end-to-end run takes minutes. It is
// for asking what a change to the rule or the cut would do before building it; the figures it prints for
// the defaults are bench:quality's (7 December 2026: equal to the third decimal on the four corpora).
// What it does itself is what the engine and dedup's passes do around those parts: LSH buckets in memory,
// every pair of a bucket compared, families by union-find, each family cut in the canonical order.
//
//   npm run build && node scripts/bench/quality/offline.mjs [--corpus templated,licences,news,pep]
//     [--min-similarity 0.7] [--condenser white-space-4-grams] [--template-share 0.005 | 0 for none]
//     [--order longest|degree] [--copies K:C:E] [--explain] [--ceiling] [--cache .cache/quality]
//
// --copies K:C:E adds to the corpus K of its documents each copied C times exactly and E times with one
// word in 33 changed (each in the family of the document copied), spread through it: the mass copies a
// deduplicated index holds (a text syndicated, mailed to many, mirrored).
//
// --order degree takes each family's members by how many of them they are within the bar of (what a
// "most central" canonical rule would do) instead of dedup's default, the longest. --explain says where the
// misses and false pairs are: lost between families (never verified, even through a chain) or cut apart,
// and how near the false pairs are by the signatures' own measure. --ceiling says what any similarity of
// whole texts could do: at each exact Jaccard t, the pairs at t or above, the share of them that are true,
// and the share of the true pairs at J >= 0.7 they hold (a threshold graph's pairs, before any clustering).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { centres, familyComparers } from '../../../dist/jobs/dedup/cluster/cluster-cut.js';
import { keyHash } from '../../../dist/jobs/dedup/documents/signature-store.js';
import { DEFAULT_TEMPLATE_REQUEST, DEFAULT_TEMPLATE_SAMPLE } from '../../../dist/indices/template-store.js';
import { createSigner } from '../../../dist/signature.js';
import { decodeCore, signatureComparer, withCore } from '../../../dist/sketch/core-similarity.js';
import { DEFAULT_TEMPLATE_MIN_COUNT, TemplateSampler } from '../../../dist/sketch/template-tokens.js';
import { pairsAtLeast } from '../../../dist/jobs/evaluate/truth-scores.js';
import { CORPUS_NAMES, DEFAULT_CORPORA, corpus } from './corpora.mjs';
import { measure } from './metrics.mjs';
import { truthOf } from './truth.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function options() {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string', default: DEFAULT_CORPORA.join(',') },
      'min-similarity': { type: 'string', default: '0.7' },
      condenser: { type: 'string', default: 'white-space-4-grams' },
      'template-share': { type: 'string', default: String(DEFAULT_TEMPLATE_REQUEST.share) },
      order: { type: 'string', default: 'longest' },
      copies: { type: 'string', default: '0:0:0' },
      explain: { type: 'boolean', default: false },
      ceiling: { type: 'boolean', default: false },
      cache: { type: 'string', default: path.join(root, '.cache/quality') },
    },
  });
  const bar = Number(values['min-similarity']);
  const share = Number(values['template-share']);
  if (!(bar > 0 && bar <= 1)) fail(`--min-similarity ${values['min-similarity']}: give a similarity in (0, 1], e.g. 0.7`);
  if (!(share >= 0 && share < 1)) fail(`--template-share ${values['template-share']}: give a share in [0, 1), e.g. 0.005, or 0 for none`);
  if (!['longest', 'degree'].includes(values.order)) fail(`--order ${values.order}: give longest or degree`);
  const copies = values.copies.split(':').map(Number);
  if (copies.length !== 3 || !copies.every((n) => Number.isInteger(n) && n >= 0)) fail(`--copies ${values.copies}: give K:C:E, three whole numbers, e.g. 10:60:5`);
  const corpora = values.corpus.split(',').filter(Boolean);
  for (const c of corpora) if (!CORPUS_NAMES.includes(c)) fail(`--corpus ${c}: not a corpus; valid: ${CORPUS_NAMES.join(', ')}`);
  return { ...values, corpora, bar, share, copies };
}

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

/** The corpus with K of its documents copied C times and E times with one word in 33 changed, in a fixed order of all (--copies). */
function withCopies(docs, [k, c, e]) {
  if (k === 0) return docs;
  const out = [...docs];
  for (let t = 0; t < k; t++) {
    const d = docs[(t * 37) % docs.length];
    for (let i = 0; i < c; i++) out.push({ id: `${d.id}#copy${i}`, family: d.family, text: d.text });
    const words = d.text.split(' ');
    for (let i = 0; i < e; i++) out.push({ id: `${d.id}#edit${i}`, family: d.family, text: words.map((w, j) => ((j * 7 + i * 13) % 33 === 0 ? `zq${i}x${j}` : w)).join(' ') });
  }
  return out.map((d, i) => [((i * 2654435761) >>> 0) % 1000003, d]).sort((a, b) => a[0] - b[0]).map(([, d]) => d);
}

/** The template set ingest would draw for these documents (its first sample, at least DEFAULT_TEMPLATE_REQUEST.atLeast), or undefined. */
function templateOf(docs, plain, share) {
  if (share === 0 || docs.length < DEFAULT_TEMPLATE_REQUEST.atLeast) return undefined;
  const sampler = new TemplateSampler(share, DEFAULT_TEMPLATE_MIN_COUNT);
  for (const d of docs.slice(0, DEFAULT_TEMPLATE_SAMPLE)) sampler.add(plain.tokenHashes(d.text));
  return sampler.result();
}

/** Every document signed as dedup reads it back: values (with the template bits when core), band keys, token count. */
function signAll(docs, opts) {
  const plain = createSigner({ condenser: opts.condenser });
  const template = templateOf(docs, plain, opts.share);
  const signer = template ? createSigner({ condenser: opts.condenser, template }) : plain;
  const numPerm = signer.settings.spec.numPerm;
  const sigs = docs.map((d) => {
    const s = signer(d.text);
    return { values: template ? withCore(s.minhash, decodeCore(s.core, numPerm)) : s.minhash, bands: s.bands, tokens: s.tokens };
  });
  const compare = signatureComparer(numPerm, template !== undefined);
  return { sigs, compare, comparing: { numPerm, core: template !== undefined }, templateSize: template ? template.hashes.length : 0 };
}

/** The list kept under `key`, made empty the first time. */
function listIn(map, key) {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}

/** Families: union-find over the pairs of a shared band key at the bar; each document's degree at the bar. */
function families(sigs, compare, bar) {
  const n = sigs.length;
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const root = (i) => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const degree = new Int32Array(n);
  const seen = new Set();
  const buckets = new Map();
  for (const [i, s] of sigs.entries()) for (const [b, key] of s.bands.entries()) listIn(buckets, `${b}:${key}`).push(i);
  for (const list of buckets.values())
    for (let x = 0; x < list.length; x++)
      for (let y = x + 1; y < list.length; y++) {
        const [a, b] = [list[x], list[y]];
        if (seen.has(a * n + b)) continue;
        seen.add(a * n + b);
        if (compare(sigs[a].values, sigs[b].values) < bar) continue;
        degree[a]++;
        degree[b]++;
        parent[root(a)] = root(b);
      }
  return { familyOf: Int32Array.from({ length: n }, (_, i) => root(i)), degree };
}

/** Each document's canonical: every family cut by dedup's cut, its members in the order asked. */
function cut(docs, signed, fam, opts) {
  const { sigs } = signed;
  const members = new Map();
  for (const [i, f] of fam.familyOf.entries()) listIn(members, f).push(i);
  const longest = (a, b) => sigs[b].tokens - sigs[a].tokens || (docs[a].id < docs[b].id ? -1 : 1);
  const order = opts.order === 'degree' ? (a, b) => fam.degree[b] - fam.degree[a] || longest(a, b) : longest;
  const owner = Array.from(docs, (_, i) => i);
  for (const list of members.values()) {
    if (list.length < 2) continue;
    list.sort(order);
    const bands = list.map((i) => Int32Array.from(sigs[i].bands, keyHash));
    const values = list.map((i) => sigs[i].values);
    const family = familyComparers(values, signed.comparing, opts.bar);
    const cuts = centres(list.map(String), bands, values, opts.bar, 64, family.compare, family.whole);
    cuts.forEach((c, k) => {
      owner[list[k]] = list[c];
    });
  }
  return owner;
}

/** Cluster keys for the measures: a document alone is in no cluster. */
function keysOf(owner) {
  const size = new Map();
  for (const o of owner) size.set(o, (size.get(o) ?? 0) + 1);
  return Array.from(owner, (o) => (size.get(o) > 1 ? String(o) : undefined));
}

const share = (k, n) => `${k} (${n === 0 ? 0 : ((100 * k) / n).toFixed(0)}%)`;

/** Where the misses and the false pairs are. */
function explain(truth, signed, fam, owner) {
  const missed = truth.recallPairs.filter(([i, j]) => owner[i] !== owner[j]);
  const apart = missed.filter(([i, j]) => fam.familyOf[i] !== fam.familyOf[j]).length;
  console.log(`  missed ${missed.length} true pairs: between families ${share(apart, missed.length)}, cut apart in one family ${share(missed.length - apart, missed.length)}`);
  const clusters = new Map();
  for (const [i, o] of owner.entries()) listIn(clusters, o).push(i);
  let falsePairs = 0;
  let nearFalse = 0;
  for (const list of clusters.values())
    for (let x = 0; x < list.length; x++)
      for (let y = x + 1; y < list.length; y++) {
        const [a, b] = [list[x], list[y]];
        if (truth.group[a] === truth.group[b]) continue;
        falsePairs++;
        if (signed.compare(signed.sigs[a].values, signed.sigs[b].values) >= fam.bar) nearFalse++;
      }
  console.log(`  false pairs ${falsePairs}: within the bar of each other by the signatures ${share(nearFalse, falsePairs)}`);
}

/** The pairs at exact J >= t, the share true, and the share of the recall pairs they hold. */
function ceiling(truth) {
  const recall = new Set(truth.recallPairs.map(([i, j]) => `${i},${j}`));
  for (const t of [0.7, 0.75, 0.8, 0.85, 0.9]) {
    const pairs = pairsAtLeast(truth.sets, t);
    const trueOnes = pairs.filter(([i, j]) => truth.group[i] === truth.group[j]).length;
    const held = pairs.filter(([i, j]) => recall.has(`${Math.min(i, j)},${Math.max(i, j)}`)).length;
    console.log(`  exact J >= ${t}: ${pairs.length} pairs, ${(trueOnes / Math.max(1, pairs.length)).toFixed(3)} true, holding ${(held / Math.max(1, recall.size)).toFixed(3)} of the true pairs at J >= 0.7`);
  }
}

const opts = options();
console.log(`offline: ${opts.condenser}, template share ${opts.share}, min-similarity ${opts.bar}, order ${opts.order}`);
for (const name of opts.corpora) {
  const read = await corpus(name, opts.cache);
  if (typeof read === 'string') {
    console.log(`${name}: left out: ${read}`);
    continue;
  }
  const docs = withCopies(read, opts.copies);
  const signed = signAll(docs, opts);
  const fam = { ...families(signed.sigs, signed.compare, opts.bar), bar: opts.bar };
  const owner = cut(docs, signed, fam, opts);
  const truth = truthOf(docs);
  const c = measure(keysOf(owner), truth);
  const f = measure(keysOf(Array.from(fam.familyOf)), truth);
  const row = (m) => `${m.precision.toFixed(3)} / ${m.recall.toFixed(3)}, split ${m.split}, largest ${m.largest.size}`;
  console.log(`${name}: clusters ${row(c)} | families ${row(f)} | template tokens ${signed.templateSize}`);
  if (opts.explain) explain(truth, signed, fam, owner);
  if (opts.ceiling) ceiling(truth);
}
