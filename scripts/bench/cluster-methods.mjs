// How the ways of cutting dedup's families into clusters compare on real chains, offline (no engine):
// the SPDX license texts that install with the project (canonical: longest, as the demo) and, when present,
// the PEP revisions corpus (canonical: oldest). Families are what dedup's verified pairs give: the
// connected components of the LSH candidate pairs (a shared band key) whose MinHash estimate reaches
// --min-similarity. Each method then names a canonical per cluster, and the table says how far the
// duplicates are from it by exact Jaccard of the texts (the tokens MinHash saw).
//
//   node scripts/bench/cluster-methods.mjs [--min-similarity 0.5] [--every-pair]   (npm run build first)
//
// Members of a family are compared when they share a band key (as dedup does), or with --every-pair all.
//
// Methods: components (every family one cluster, single linkage); first (canonicals taken in the
// --canonical order, each claiming the members within the bar not yet claimed); nearest (the same
// canonicals, each duplicate given to the nearest canonical within the bar, even one the rule ranks after
// it); earlier (each member in order to the nearest canonical before it within the bar, else a canonical:
// a cluster's canonical is always the member the rule prefers); a "+" (a canonical left alone takes its
// nearest member from a cluster that keeps another); near-dup (what dedup runs, earlier+, from
// dist/jobs/dedup/cluster/cluster-cut.js); star (the member with the most unclaimed members within the bar first,
// --canonical order on ties: the rule then only breaks ties). "alone": canonicals left without duplicates.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { centres } from '../../dist/jobs/dedup/cluster/cluster-cut.js';
import { keyHash } from '../../dist/jobs/dedup/documents/signature-store.js';
import { createSigner } from '../../dist/signature.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const bar = arg('min-similarity', 0.5);
// Compare only members that share a band key (as near-dup does), or every pair of a family.
const bandsOnly = !process.argv.includes('--every-pair');
const signer = createSigner();

function corpora() {
  const require = createRequire(import.meta.url);
  const full = require('spdx-license-list/spdx-full.json');
  const licences = Object.entries(full).map(([id, l]) => ({ id, text: l.licenseText }));
  const out = [{ name: 'SPDX licences (longest)', docs: licences, rule: 'longest' }];
  const pepFile = process.env.NEAR_DUP_CORPUS ?? path.resolve(here, '../../../shared/corpora/peps-revisions.jsonl.gz');
  if (existsSync(pepFile)) {
    const peps = gunzipSync(readFileSync(pepFile)).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    out.push({ name: 'PEP revisions (oldest)', docs: peps.map((d) => ({ id: d.id, text: d.text, date: d.date })), rule: 'oldest' });
  } else console.log(`(no PEP corpus at ${pepFile}: licences only)`);
  return out;
}

function estimate(a, b) {
  let equal = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) equal++;
  return equal / a.length;
}

function exact(x, y) {
  let shared = 0;
  for (const t of x) if (y.has(t)) shared++;
  return shared / (x.size + y.size - shared);
}

/** Families: components of the verified LSH candidate pairs. */
function families(docs) {
  const parent = docs.map((_, i) => i);
  const root = (i) => (parent[i] === i ? i : (parent[i] = root(parent[i])));
  const buckets = new Map();
  for (const [i, d] of docs.entries()) {
    for (const key of d.sig.bands) {
      if (!buckets.has(key)) buckets.set(key, []);
      buckets.get(key).push(i);
    }
  }
  const tried = new Set();
  for (const members of buckets.values()) {
    for (let p = 0; p < members.length; p++) {
      for (let q = p + 1; q < members.length; q++) {
        const [i, j] = [members[p], members[q]];
        const key = i * 1e6 + j;
        if (tried.has(key)) continue;
        tried.add(key);
        if (estimate(docs[i].sig.minhash, docs[j].sig.minhash) >= bar) parent[root(i)] = root(j);
      }
    }
  }
  const groups = new Map();
  for (let i = 0; i < docs.length; i++) {
    if (!groups.has(root(i))) groups.set(root(i), []);
    groups.get(root(i)).push(i);
  }
  return [...groups.values()].filter((g) => g.length > 1);
}

/** Each method: family members in --canonical order -> Map member -> canonical (canonicals map to themselves; a member left out maps to undefined). */
const methods = {
  components: (members) => new Map(members.map((m) => [m, members[0]])),
  first: (members, near) => {
    const owner = new Map();
    for (const c of members) {
      if (owner.has(c)) continue;
      owner.set(c, c);
      for (const m of members) if (!owner.has(m) && near(c, m) >= bar) owner.set(m, c);
    }
    return owner;
  },
  nearest: (members, near) => {
    const canonicals = [];
    for (const m of members) if (!canonicals.some((c) => near(c, m) >= bar)) canonicals.push(m);
    const owner = new Map(canonicals.map((c) => [c, c]));
    for (const m of members) {
      if (owner.has(m)) continue;
      let best, bestSim = -1;
      for (const c of canonicals) {
        const s = near(c, m);
        if (s >= bar && s > bestSim) [best, bestSim] = [c, s];
      }
      owner.set(m, best);
    }
    return owner;
  },
  'nearest+': (members, near) => withTheNearest(members, near, methods.nearest(members, near)),
  'earlier': (members, near) => {
    const canonicals = [];
    const owner = new Map();
    for (const m of members) {
      let best, bestSim = -1;
      for (const c of canonicals) {
        const s = near(c, m);
        if (s >= bar && s > bestSim) [best, bestSim] = [c, s];
      }
      if (best) owner.set(m, best);
      else {
        canonicals.push(m);
        owner.set(m, m);
      }
    }
    return owner;
  },
  'earlier+': (members, near) => withTheNearest(members, near, methods.earlier(members, near)),
  // What dedup runs (dedup/cluster/cluster-cut.ts): earlier+, candidates by shared band keys.
  'near-dup': (members) => {
    const owner = centres(
      members.map((m) => m.id),
      members.map((m) => Int32Array.from(m.sig.bands, keyHash)),
      members.map((m) => m.sig.minhash),
      bar,
    );
    return new Map(members.map((m, i) => [m, members[owner[i]]]));
  },
  star: (members, near) => {
    const owner = new Map();
    while (owner.size < members.length) {
      let best, bestCount = -1;
      for (const c of members) {
        if (owner.has(c)) continue;
        const count = members.filter((m) => !owner.has(m) && m !== c && near(c, m) >= bar).length;
        if (count > bestCount) [best, bestCount] = [c, count];
      }
      owner.set(best, best);
      for (const m of members) if (!owner.has(m) && near(best, m) >= bar) owner.set(m, best);
    }
    return owner;
  },
};

/**
 * A canonical left without duplicates goes with its nearest member within the bar, when that member's
 * cluster keeps another duplicate: the two make a cluster (canonical by the rule), each within the bar.
 */
function withTheNearest(members, near, owner) {
  const size = new Map();
  for (const c of owner.values()) if (c) size.set(c, (size.get(c) ?? 0) + 1);
  for (const o of members) {
    if (owner.get(o) !== o || size.get(o) > 1) continue;
    let best, bestSim = -1;
    for (const x of members) {
      const c = owner.get(x);
      if (!c || c === x || size.get(c) < 3) continue;
      const s = near(o, x);
      if (s >= bar && s > bestSim) [best, bestSim] = [x, s];
    }
    if (!best) continue;
    size.set(owner.get(best), size.get(owner.get(best)) - 1);
    const [canonical, duplicate] = members.indexOf(best) < members.indexOf(o) ? [best, o] : [o, best];
    owner.set(canonical, canonical);
    owner.set(duplicate, canonical);
    size.delete(o);
    size.set(canonical, 2);
  }
  return owner;
}

for (const { name, docs, rule } of corpora()) {
  const started = performance.now();
  for (const d of docs) {
    d.sig = signer(d.text);
    d.tokens = new Set(signer.normalize(d.text).split(' ').filter(Boolean));
  }
  const signed = docs.filter((d) => d.sig.tokens > 0);
  const order = rule === 'longest' ? (a, b) => b.sig.tokens - a.sig.tokens || (a.id < b.id ? -1 : 1) : (a, b) => Date.parse(a.date) - Date.parse(b.date) || (a.id < b.id ? -1 : 1);
  const fams = families(signed).map((f) => f.map((i) => signed[i]).sort(order));
  const inFamilies = fams.reduce((n, f) => n + f.length, 0);
  console.log(`\n${name}: ${signed.length} documents, ${fams.length} families holding ${inFamilies} (largest ${Math.max(...fams.map((f) => f.length))}), bar ${bar}, ${((performance.now() - started) / 1000).toFixed(1)} s to sign and pair`);
  console.log('method      clusters  duplicates  alone  exact J to canonical: <0.4  <0.5  median   min   largest');
  for (const [method, cut] of Object.entries(methods)) {
    let clusters = 0, duplicates = 0, alone = 0, below4 = 0, below5 = 0, largest = 0;
    const sims = [];
    for (const f of fams) {
      const owner = cut(f, (a, b) => (bandsOnly && !a.sig.bands.some((k, i) => k === b.sig.bands[i]) ? 0 : estimate(a.sig.minhash, b.sig.minhash)));
      const sizes = new Map();
      for (const c of owner.values()) if (c) sizes.set(c, (sizes.get(c) ?? 0) + 1);
      for (const [m, c] of owner) {
        if (!c || m === c) continue;
        duplicates++;
        const j = exact(m.tokens, c.tokens);
        sims.push(j);
        if (j < 0.4) below4++;
        if (j < 0.5) below5++;
      }
      for (const size of sizes.values()) {
        if (size > 1) clusters++;
        else alone++;
        largest = Math.max(largest, size);
      }
    }
    sims.sort((a, b) => a - b);
    const median = sims.length ? sims[Math.floor(sims.length / 2)] : Number.NaN;
    console.log(
      `${method.padEnd(10)} ${String(clusters).padStart(9)} ${String(duplicates).padStart(11)} ${String(alone).padStart(6)} ${String(below4).padStart(27)} ${String(below5).padStart(5)} ${median.toFixed(3).padStart(7)} ${(sims[0] ?? Number.NaN).toFixed(3).padStart(5)} ${String(largest).padStart(9)}`,
    );
  }
}
