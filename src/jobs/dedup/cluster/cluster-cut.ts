// From verified pairs to the clusters dedup writes. The verified pairs join documents into families
// (connected components: a chain of near-duplicates is one family, its first and last versions maybe far
// apart). Each family is then cut into clusters whose every duplicate is within --min-similarity of its
// canonical, by the stored signatures:
//  - near-identical copies (pairs estimated at TIGHT_SIMILARITY or above) are joined first into groups that
//    are never split (a page and its copy with a paragraph deleted end in one cluster);
//  - the groups are taken in the --canonical order of their first members: each goes whole to the nearest
//    canonical before it that all its members are within the bar of, or, when there is none, its first
//    member that all of them stay with is a canonical itself (so a cluster's canonical is the member the
//    rule prefers among those its copies are near, and no two canonicals are near-duplicates); a member of
//    the group stays with that canonical when it is within the bar of it by the comparer or by the whole
//    texts (which, for `;core=` signatures, may differ: the core rule keeps two pages of one template from
//    joining, and must not cut a member from a group that near-identical copies made when the whole texts
//    say it is near), else it goes on alone;
//  - a canonical left without duplicates goes with its nearest member within the bar, when that member's
//    cluster keeps another duplicate: the two make a cluster, its canonical by the rule;
//  - in all of these, two members are compared as the verifier does, capped by what they share beside the
//    text that many members of the family hold (familyComparers, sketch/family-template.ts): sibling pages
//    that document one structure are alike as a whole and as cores, and apart once it is left out.
// Candidates are the members that share a band key (what LSH pairs), checked with the MinHash estimate, so a
// family costs about what its buckets did, and the result depends only on the family's signatures and the
// rule: the in-memory, partitioned, resumed and incremental passes cut a family alike.
// `components` keeps whole families as clusters (single linkage), for those who want every chain together.
// The alternatives were measured on real chains (scripts/bench/cluster-methods.mjs).
import { wholeSimilarity } from '../../../sketch/core-similarity.js';
import { FamilyTemplate } from '../../../sketch/family-template.js';
import { equalValues } from '../../../sketch/minhash.js';
import { ClusterList, type DedupCluster } from './cluster-list.js';
import { type Comparing, comparerOf, wholeComparerOf } from '../verify/comparing.js';
import { type DocIds, enlarged } from '../documents/doc-numbers.js';
import type { FactsLookup } from '../documents/facts.js';
import { IdSet } from './id-set.js';
import type { SpillFolder } from '../spill/spill-folder.js';
import type { StoredSignature } from '../documents/signature-store.js';

/**
 * Which member of a cluster is its canonical (--canonical): the oldest, the newest, the longest, or the first by a
 * field in either order.
 */
export type CanonicalRule = 'oldest' | 'newest' | 'longest' | { field: string; order: 'asc' | 'desc' };

/** centres: every duplicate within the bar of its canonical (the default); components: whole families. */
export type ClusterMethod = 'centres' | 'components';
/** The --clusters values, to check the one given against and to name in the message when it is neither. */
export const CLUSTER_METHODS: readonly ClusterMethod[] = ['centres', 'components'];


/** Reads the signatures of these documents (those it has), given by id and by number. */
export type SignatureSource = (ids: string[], numbers: ArrayLike<number>) => Promise<ReadonlyMap<string, StoredSignature>>;

/**
 * How the families are cut: the method and canonical rule, the bar, where the members' facts and signatures come from,
 * and where the clusters go when the run spills.
 */
export interface CutSettings {
  method: ClusterMethod;
  rule: CanonicalRule;
  minSimilarity: number;
  /** How two members' signatures are compared (the verifier's); by the share of equal values when not said. */
  comparing?: Comparing;
  facts: FactsLookup;
  signatures: SignatureSource;
  /** Called first with the families, when the signatures' table would have their members' records gathered to be read in order. */
  gatherMembers?: (families: Iterable<ArrayLike<number>>) => unknown;
  /** The numbering of the documents (the families' numbers). */
  documents: DocIds;
  /**
   * A folder of the run's spill: the clusters' members and the ids written go there, so that memory holds a
   * few bytes a cluster and none a member (else they are kept in memory).
   */
  spill?: SpillFolder;
  /** Families cut so far, told once at the start and after each batch (dedup's progress). */
  onFamilies?: (cut: number) => void;
}

/**
 * What the cut hands the write-back: the clusters, the family counts for the summary, and the family members left in no
 * cluster (each written as a canonical of its own).
 */
export interface Cut {
  /** In the order cut, each made whole as it is handed out (the largest: ClusterList.top). */
  clusters: ClusterList;
  families: number;
  largestFamily: number;
  /** Whether a document is written with cluster fields: a member of a cluster, or a family member alone. */
  clustered(id: string): boolean;
  /** The numbers of the family members (each with a verified pair) that are in no cluster. */
  alone: Int32Array;
}

/** Members of families read together, so that their signatures come in a few requests. */
const MEMBERS_PER_READ = 5000;

/**
 * Cuts every family (each the numbers of two or more documents, in `settings.documents`' numbering) into
 * clusters, a batch of families at a time: the batch's ids read in ascending numbers, its signatures and
 * facts found by number, so that nothing is looked up by id.
 */
export async function cutFamilies(families: Iterable<ArrayLike<number>>, settings: CutSettings): Promise<Cut> {
  const { documents, spill } = settings;
  settings.gatherMembers?.(families);
  const clusters = new ClusterList(documents, spill);
  // The ids written with cluster fields: the clusters' members and the family members in none (each
  // written as a canonical of its own); 8 bytes each (on disk with a spill), nothing for the documents
  // without a near-duplicate.
  const written = new IdSet(spill);
  let alone = new Int32Array(1024);
  let aloneCount = 0;
  let count = 0;
  let largestFamily = 0;
  let batch: Array<ArrayLike<number>> = [];
  let batchSize = 0;
  const cutBatch = async () => {
    const numbers = batch.flatMap((family) => Array.from(family));
    const { ids, numberOf } = namesOf(numbers, settings.documents);
    const signatures = await settings.signatures(numbers.map((n) => ids.get(n)!), numbers);
    for (const numbered of batch) {
      // An id numbered twice (met in two indices of an alias by a scan that numbers on disk without looking
      // ids up) is one member, by the number the batch's names give it.
      const family = Array.from(numbered).filter((n) => numberOf.get(ids.get(n)!) === n);
      if (family.length < 2) continue;
      const members = Array.from(family, (n) => ids.get(n)!);
      const facts = factsOf(family, members, settings.facts);
      const inCluster = new Set<string>();
      for (const cluster of cutFamily(members, signatures, { ...settings, facts })) {
        clusters.add(cluster, (id) => numberOf.get(id)!);
        for (const id of cluster.members) inCluster.add(id);
      }
      // (A member without a signature, gone or damaged since its pairs were verified, is left out.)
      for (let k = 0; k < members.length; k++) {
        if (inCluster.has(members[k])) written.add(members[k]);
        else if (signatures.has(members[k])) {
          if (aloneCount === alone.length) alone = enlarged(alone, aloneCount * 2);
          alone[aloneCount++] = family[k];
          written.add(members[k]);
        }
      }
    }
    batch = [];
    batchSize = 0;
    settings.onFamilies?.(count);
  };
  settings.onFamilies?.(0);
  for (const family of families) {
    count++;
    largestFamily = Math.max(largestFamily, family.length);
    batch.push(family);
    batchSize += family.length;
    if (batchSize >= MEMBERS_PER_READ) await cutBatch();
  }
  await cutBatch();
  // Sorted (on disk: written out) now, so that the write-back writes nothing to the disk once its first
  // update is sent (the clusters' last buffer goes to their file at their first read, before that).
  written.seal();
  return {
    clusters,
    families: count,
    largestFamily,
    clustered: (id) => written.has(id),
    alone: alone.subarray(0, aloneCount),
  };
}

/** The ids of the batch's documents (read in ascending numbers), and each id's number. */
function namesOf(members: readonly number[], documents: DocIds): { ids: Map<number, string>; numberOf: Map<string, number> } {
  const ascending = Int32Array.from(members).sort();
  const read = documents.idsOf(ascending);
  const ids = new Map<number, string>();
  const numberOf = new Map<string, number>();
  ascending.forEach((n, i) => {
    ids.set(n, read[i]);
    numberOf.set(read[i], n);
  });
  return { ids, numberOf };
}

/** A family's facts by id, taken by number when the lookup has them so (no lookup of the id). */
function factsOf(family: ArrayLike<number>, members: readonly string[], facts: FactsLookup): FactsLookup {
  const at = facts.at?.bind(facts);
  if (!at) return facts;
  const byId = new Map(members.map((id, i) => [id, at(family[i])]));
  return { get: (id) => byId.get(id) };
}

/** One family's clusters; members without a signature are left out. */
export function cutFamily(family: readonly string[], signatures: ReadonlyMap<string, StoredSignature>, settings: Omit<CutSettings, 'signatures' | 'documents'>): DedupCluster[] {
  const members = family.filter((id) => signatures.has(id)).sort(canonicalOrder(settings.facts, settings.rule));
  if (members.length < 2) return [];
  const values = members.map((id) => signatures.get(id)!.values);
  const compare = comparerOf(settings.comparing);
  const whole = wholeComparerOf(settings.comparing);
  const bar = settings.minSimilarity;
  const bands = members.map((id) => signatures.get(id)!.bands);
  const owner = settings.method === 'components' ? members.map(() => 0) : centresOfFamily(members, bands, values, bar, settings.comparing);
  const clusters: DedupCluster[] = [];
  for (const list of groupedBy(owner.length, (i) => owner[i])) {
    if (list.length < 2) continue;
    const c = owner[list[0]];
    const similarity = new Map(list.map((i) => [members[i], i === c ? 1 : canonicalSimilarity(values[c], values[i], compare, whole, bar)]));
    clusters.push({ id: members[c], canonical: members[c], members: list.map((i) => members[i]).sort(), similarity, family: members[0] });
  }
  return clusters;
}

/**
 * How a family's members are compared in its cut: the verifier's comparer, capped by what two members share
 * beside the family's own template (sketch/family-template.ts) unless their whole texts are within
 * TIGHT_SIMILARITY (so a pair that joins a group of copies joins it still) or the pair is below `bar` (where
 * the cap would change nothing the cut asks); the whole texts' comparer as the verifier's when its signatures
 * carry an index template (a member of a group of copies stays by it), else the capped one.
 */
export function familyComparers(values: readonly Uint32Array[], comparing: Comparing | undefined, bar = 0): { compare: Comparer; whole: Comparer } {
  const compare = comparerOf(comparing);
  const whole = wholeComparerOf(comparing);
  const core = comparing?.core ?? false;
  const numPerm = comparing?.numPerm ?? values[0]?.length ?? 0;
  const template = FamilyTemplate.of(values, numPerm, core);
  if (!template) return { compare, whole };
  const member = new Map(values.map((v, k) => [v, k]));
  const capped: Comparer = (x, y) => {
    const similarity = compare(x, y);
    // Below the bar the cap changes nothing the cut asks (whether a pair is within it, and the nearest within it).
    if (similarity < bar) return similarity;
    if ((core ? wholeSimilarity(x, y, numPerm) : similarity) >= TIGHT_SIMILARITY) return similarity;
    const own = template.similarity(member.get(x)!, member.get(y)!);
    return own === undefined ? similarity : Math.min(similarity, own);
  };
  return { compare: capped, whole: core ? whole : capped };
}

/** `centres` with the family's comparers: its template decides where a member goes; the similarity written is the pair's own. */
function centresOfFamily(members: readonly string[], bands: ReadonlyArray<Int32Array>, values: readonly Uint32Array[], bar: number, comparing: Comparing | undefined): number[] {
  const { compare, whole } = familyComparers(values, comparing, bar);
  return centres(members, bands, values, bar, SCANNED_FAMILY, compare, whole);
}

/** A member's similarity to its canonical: the comparer's, or the whole texts' when only they put it within the bar. */
function canonicalSimilarity(c: Uint32Array, m: Uint32Array, compare: Comparer, whole: Comparer, bar: number): number {
  const similarity = compare(c, m);
  return similarity >= bar || compare === whole ? similarity : Math.max(similarity, whole(c, m));
}

type Comparer = (a: Uint32Array, b: Uint32Array) => number;

/**
 * Each member's canonical, by position in `members` (already in the --canonical order): see the head of
 * this file. A canonical is its own.
 */
export function centres(
  members: readonly string[],
  bands: ReadonlyArray<Int32Array>,
  values: ReadonlyArray<Uint32Array>,
  bar: number,
  scanUpTo = SCANNED_FAMILY,
  compare: Comparer = estimate,
  whole: Comparer = compare,
): number[] {
  const n = members.length;
  const by = (f: Comparer) => (i: number, j: number) => (values[i].length === values[j].length ? f(values[i], values[j]) : 0);
  const near = by(compare);
  const nearWhole = by(whole);
  const stays = (m: number, c: number) => near(m, c) >= bar || (whole !== compare && nearWhole(m, c) >= bar);
  const identical = (i: number, j: number) => equalValues(values[i], values[j]) === values[i].length;
  const groups = tightGroups(n, bands, near, identical, Math.max(bar, TIGHT_SIMILARITY), scanUpTo);
  const owner = new Array<number>(n).fill(-1);
  const size = new Int32Array(n);
  const canonicalIndex = candidatesOf(bands, scanUpTo);
  // In order of their first members: a group goes whole to the nearest canonical before it that every one
  // of its members is within the bar of, or its first member is a canonical, with the members within the
  // bar of it (one that drifted below along a chain of near-identical copies goes on alone, after it).
  const pending = groups.map((group) => [...group]);
  for (let g = 0; g < pending.length; g++) {
    const group = pending[g];
    const c = nearestForAll(group, canonicalIndex, near, bar);
    const canonical = c < 0 ? centreOf(group, stays) : c;
    if (c < 0) canonicalIndex.add(canonical);
    for (const m of group) {
      if (m === canonical || stays(m, canonical)) {
        owner[m] = canonical;
        size[canonical]++;
      } else insertInOrder(pending, g + 1, m);
    }
  }
  rescueLoneCanonicals(owner, size, groups, bands, near, bar, scanUpTo);
  return owner;
}

/**
 * A group's canonical when it goes to none before it: its first member (the one --canonical prefers) that
 * every member of the group stays with, so that near-identical copies end in one cluster whose canonical
 * each is near; the first member when none of the first CENTRES_TRIED is (a chain that drifted: the members
 * far from it go on alone).
 */
function centreOf(group: readonly number[], stays: (m: number, c: number) => boolean): number {
  for (let k = 0; k < Math.min(group.length, CENTRES_TRIED); k++) if (group.every((m) => m === group[k] || stays(m, group[k]))) return group[k];
  return group[0];
}

/** How many of a group's first members are tried as its canonical (each costs a comparison per member). */
const CENTRES_TRIED = 16;

/** A member on its own among the groups still to come, where its place in the order puts it. */
function insertInOrder(pending: number[][], from: number, m: number): void {
  let at = from;
  while (at < pending.length && pending[at][0] < m) at++;
  pending.splice(at, 0, [m]);
}

/**
 * Pairs estimated at this similarity or above are never put in different clusters: a page and its copy
 * (one paragraph deleted, an alias) stay together whatever else they are near. 0.85, not 0.9: with 128
 * values, a pair of Jaccard 0.9 is estimated below 0.85 about once in 40.
 */
export const TIGHT_SIMILARITY = 0.85;

/**
 * The members joined by pairs at `tight` or above (sharing a band key, as LSH pairs them), each group in
 * order, the groups in the order of their first members.
 */
function tightGroups(n: number, bands: ReadonlyArray<Int32Array>, near: (i: number, j: number) => number, identical: (i: number, j: number) => boolean, tight: number, scanUpTo: number): number[][] {
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const index = candidatesOf(bands, scanUpTo);
  for (let i = 0; i < n; i++) {
    let copy = false;
    index.some(i, (j) => {
      const similarity = near(i, j);
      if (similarity < tight) return false;
      const [a, b] = [root(i), root(j)];
      if (a !== b) parent[Math.max(a, b)] = Math.min(a, b); // the earlier member roots its group
      // (Under the core rule, two members whose small cores are alike are at 1 with other values.)
      copy ||= similarity === 1 && identical(i, j);
      return false;
    });
    // A member with the same values as one indexed finds what that one finds: not indexed, so that a family
    // of exact copies costs a pass, not a comparison of every pair.
    if (!copy) index.add(i);
  }
  return groupedBy(n, root);
}

/** 0..n-1 grouped by `key`, each group ascending, the groups in the order of their first members. */
function groupedBy(n: number, key: (i: number) => number): number[][] {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const group = groups.get(key(i));
    if (group) group.push(i);
    else groups.set(key(i), [i]);
  }
  return [...groups.values()];
}

/**
 * The candidate in `index` (sharing a band key with some member of `group`, not one of them, and one `allowed`
 * accepts) that all of `group` is nearest to, by its least similarity to them, within the bar (the earlier on
 * a tie), or -1.
 */
function nearestForAll(group: readonly number[], index: Candidates, near: (i: number, j: number) => number, bar: number, allowed: (c: number) => boolean = () => true): number {
  const tried = new Set<number>(group);
  let best = -1;
  let bestSimilarity = -1;
  for (const m of group) {
    index.some(m, (c) => {
      if (tried.has(c)) return false;
      tried.add(c);
      if (!allowed(c)) return false;
      let least = 1;
      for (const x of group) least = Math.min(least, near(x, c));
      if (least >= bar && (least > bestSimilarity || (least === bestSimilarity && c < best))) [best, bestSimilarity] = [c, least];
      return false;
    });
  }
  return best;
}

/**
 * A canonical left alone goes with its nearest member within the bar whose cluster can spare it (a member
 * of no tight group, in a cluster of three or more): the two make a cluster, its canonical by the rule.
 */
function rescueLoneCanonicals(owner: number[], size: Int32Array, groups: readonly number[][], bands: ReadonlyArray<Int32Array>, near: (i: number, j: number) => number, bar: number, scanUpTo: number): void {
  const n = owner.length;
  const inGroup = new Uint8Array(n);
  for (const group of groups) if (group.length > 1) for (const m of group) inGroup[m] = 1;
  const memberIndex = candidatesOf(bands, scanUpTo);
  for (let i = 0; i < n; i++) memberIndex.add(i);
  for (let o = 0; o < n; o++) {
    if (owner[o] !== o || size[o] > 1) continue;
    const x = nearestForAll([o], memberIndex, near, bar, (j) => owner[j] !== j && size[owner[j]] > 2 && inGroup[j] === 0);
    if (x < 0) continue;
    size[owner[x]]--;
    const [canonical, duplicate] = x < o ? [x, o] : [o, x];
    owner[canonical] = canonical;
    owner[duplicate] = canonical;
    size[canonical] = 2;
    if (canonical !== o) size[o] = 0;
  }
}

/** Members added, found again by the band keys they share with another (what LSH would have paired). */
interface Candidates {
  add(i: number): void;
  /** Whether `test` holds for some member added that shares a band key with i (stops at the first). */
  some(i: number, test: (j: number) => boolean): boolean;
}

/** Families up to this size are searched member by member: cheaper than maps of their keys. */
const SCANNED_FAMILY = 64;

function candidatesOf(bands: ReadonlyArray<Int32Array>, scanUpTo: number): Candidates {
  return bands.length <= scanUpTo ? new BandScan(bands) : new BandIndex(bands);
}

/** A small family: every member added is checked for a shared band key. */
class BandScan implements Candidates {
  private readonly added: number[] = [];

  constructor(private readonly bands: ReadonlyArray<Int32Array>) {}

  add(i: number): void {
    this.added.push(i);
  }

  some(i: number, test: (j: number) => boolean): boolean {
    const keys = this.bands[i];
    for (const j of this.added) {
      const other = this.bands[j];
      let shared = false;
      for (let band = 0; band < keys.length && band < other.length && !shared; band++) shared = keys[band] === other[band];
      if (shared && test(j)) return true;
    }
    return false;
  }
}

/** Members by their band keys (as hashed for verification), band by band; each candidate visited once per query. */
class BandIndex implements Candidates {
  private readonly byBand: Array<Map<number, number[]>> = [];
  private readonly seen: Int32Array;
  private query = 0;

  constructor(private readonly bands: ReadonlyArray<Int32Array>) {
    let width = 0;
    for (const keys of bands) width = Math.max(width, keys.length);
    for (let band = 0; band < width; band++) this.byBand.push(new Map());
    this.seen = new Int32Array(bands.length);
  }

  add(i: number): void {
    this.bands[i].forEach((hash, band) => {
      const list = this.byBand[band].get(hash);
      if (list) list.push(i);
      else this.byBand[band].set(hash, [i]);
    });
  }

  some(i: number, test: (j: number) => boolean): boolean {
    const query = ++this.query;
    const keys = this.bands[i];
    for (let band = 0; band < keys.length; band++) {
      for (const j of this.byBand[band].get(keys[band]) ?? []) {
        if (this.seen[j] === query) continue;
        this.seen[j] = query;
        if (test(j)) return true;
      }
    }
    return false;
  }
}

/** The estimated Jaccard of two MinHash signatures of one length: the share of equal values. */
function estimate(a: Uint32Array, b: Uint32Array): number {
  return equalValues(a, b) / a.length;
}

/** The --canonical order: the member the rule prefers first; a member without a value last in either order; ties to the smallest id. */
export function canonicalOrder(facts: FactsLookup, rule: CanonicalRule): (a: string, b: string) => number {
  const tokens = (id: string) => facts.get(id)?.tokens ?? 0;
  const byKey = (a: string, b: string, direction: 1 | -1) => {
    const x = facts.get(a)?.sortKey, y = facts.get(b)?.sortKey;
    const missingX = x === undefined || x === null, missingY = y === undefined || y === null;
    if (missingX || missingY) return missingX === missingY ? 0 : missingX ? 1 : -1;
    return compareValues(x, y, direction);
  };
  const direction = rule === 'newest' || (typeof rule === 'object' && rule.order === 'desc') ? -1 : 1;
  return (a, b) => (rule === 'longest' ? tokens(b) - tokens(a) : byKey(a, b, direction)) || (a < b ? -1 : a > b ? 1 : 0);
}

/** The member the rule prefers. */
export function pickCanonical(members: readonly string[], facts: FactsLookup, rule: CanonicalRule): string {
  return [...members].sort(canonicalOrder(facts, rule))[0];
}

/**
 * A total order over whatever a sort field holds, so that sorting is the same whatever order the members
 * come in: numbers and dates (a string that reads as a date, as its milliseconds) first, then other
 * strings, then booleans, then anything else by its JSON; within a kind by value, in `direction` (1
 * ascending, -1 descending). Mixed kinds never compare as equal, and keep their order in either direction.
 */
export function compareValues(a: unknown, b: unknown, direction: 1 | -1 = 1): number {
  if (a === b) return 0;
  const [rankA, x] = sortable(a);
  const [rankB, y] = sortable(b);
  if (rankA !== rankB) return rankA - rankB;
  return x < y ? -direction : x > y ? direction : 0;
}

/** A value's kind (its rank among kinds) and what it sorts by within that kind. */
function sortable(value: unknown): [number, number | string] {
  if (typeof value === 'number') return Number.isNaN(value) ? [3, 'NaN'] : [0, value];
  if (typeof value === 'string') {
    const date = Date.parse(value);
    return Number.isNaN(date) ? [1, value] : [0, date];
  }
  if (typeof value === 'boolean') return [2, Number(value)];
  return [3, JSON.stringify(value) ?? String(value)];
}
