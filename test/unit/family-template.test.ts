// A family's own template (sketch/family-template.ts) and the cut that uses it (cluster-cut.ts,
// familyComparers): sibling pages that share a structure with many others are cut apart, the versions of
// one page kept together.
import { describe, expect, it } from 'vitest';
import { cutFamily, familyComparers } from '../../src/jobs/dedup/cluster/cluster-cut.js';
import { keyHash, type StoredSignature } from '../../src/jobs/dedup/documents/signature-store.js';
import { coreExtension, withCore } from '../../src/sketch/core-similarity.js';
import { FAMILY_CORE_MIN_PLACES, FAMILY_TEMPLATE_HOLDERS, FAMILY_TEMPLATE_MAX_MEMBERS, FamilyTemplate } from '../../src/sketch/family-template.js';
import { minhashJaccard } from '../../src/sketch/minhash.js';
import { createSigner } from '../../src/signature.js';

const NUM_PERM = 64;

/** Members of `commands` commands, two versions each: the first half of the places one structure, the rest the command's own. */
function siblings(commands: number): Uint32Array[] {
  return Array.from({ length: commands * 2 }, (_, m) => Uint32Array.from({ length: NUM_PERM }, (_, p) => (p < NUM_PERM / 2 ? 1 : 100 + Math.floor(m / 2))));
}

describe('a family template from the signatures', () => {
  it('leaves out what many members hold: versions of one command alike, two commands not', () => {
    const template = FamilyTemplate.of(siblings(5), NUM_PERM, false)!;
    expect(minhashJaccard(siblings(5)[0], siblings(5)[2])).toBe(0.5); // by their whole texts, half alike
    expect(template.similarity(0, 1)).toBe(1);
    expect(template.similarity(0, 2)).toBe(0);
  });

  it('has nothing to say of a family too small for a template, or of a pair with too few places', () => {
    expect(FamilyTemplate.of(siblings(3).slice(0, FAMILY_TEMPLATE_HOLDERS + 1), NUM_PERM, false)).toBeUndefined();
    // A member whose own values no other member holds: its places are an edit's own words, left out.
    const family = siblings(5);
    family.push(Uint32Array.from({ length: NUM_PERM }, (_, p) => (p < NUM_PERM / 2 ? 1 : 10 + p)));
    const template = FamilyTemplate.of(family, NUM_PERM, false)!;
    expect(template.similarity(family.length - 1, 0)).toBeUndefined();
    // A family too large to cut by its template in bounded time is cut without it.
    const many = Array.from({ length: FAMILY_TEMPLATE_MAX_MEMBERS + 1 }, (_, m) => siblings(1)[m % 2]);
    expect(FamilyTemplate.of(many, NUM_PERM, false)).toBeUndefined();
    expect(FamilyTemplate.of(many.slice(1), NUM_PERM, false)).toBeDefined();
    // Damaged values (another length) give no template rather than a wrong count.
    expect(FamilyTemplate.of([...siblings(5), new Uint32Array(3)], NUM_PERM, false)).toBeUndefined();
  });

  it('leaves out the places whose minimum is an index template token (the core bits)', () => {
    const marked = (bits: number[]) => siblings(5).map((v) => withCore(v, coreExtension(Array.from({ length: NUM_PERM }, (_, p) => bits.includes(p)), 10)));
    const own = Array.from({ length: NUM_PERM / 2 }, (_, k) => NUM_PERM / 2 + k);
    expect(FamilyTemplate.of(marked([]), NUM_PERM, true)!.similarity(0, 1)).toBe(1);
    // All but FAMILY_CORE_MIN_PLACES - 1 of the own places marked template: too few left to say anything.
    expect(FamilyTemplate.of(marked(own.slice(FAMILY_CORE_MIN_PLACES - 1)), NUM_PERM, true)!.similarity(0, 1)).toBeUndefined();
  });
});

describe('the cut of a family of sibling pages', () => {
  // Eight commands of one service, two releases each: a page is the command's own text (its name, its
  // description) and a structure that all eight document; a release changes two words of the own text.
  const words = (seed: string, n: number) => Array.from({ length: n }, (_, k) => `${seed}${(k * 7919) % 1000}`).join(' ');
  const structure = words('field', 400);
  const page = (command: number, release: number) => `aws service command${command} ${words(`own${command}x`, 70)} release${release} note${release} ${structure}`;
  const sign = createSigner({ condenser: 'white-space-4-grams' });
  const ids: string[] = [];
  const signatures = new Map<string, StoredSignature>();
  for (let command = 0; command < 8; command++)
    for (const release of [1, 2]) {
      const id = `c${command}r${release}`;
      const s = sign(page(command, release));
      ids.push(id);
      signatures.set(id, { values: s.minhash, simhash: s.simhash, bands: Int32Array.from(s.bands, keyHash) });
    }
  const facts = new Map(ids.map((id, k) => [id, { tokens: 400, sortKey: k }]));

  it('two commands are alike by their whole texts, within the bar', () => {
    const alike = minhashJaccard(signatures.get('c0r1')!.values, signatures.get('c1r1')!.values);
    expect(alike).toBeGreaterThan(0.7);
    expect(alike).toBeLessThan(0.85);
  });

  it('puts each command in a cluster of its own versions', () => {
    const clusters = cutFamily(ids, signatures, { method: 'centres', rule: 'oldest', minSimilarity: 0.7, facts });
    expect(clusters.map((c) => c.members).sort()).toEqual(Array.from({ length: 8 }, (_, k) => [`c${k}r1`, `c${k}r2`]));
  });

  it('compares a pair nearly identical as a whole by the verifier alone, whatever the family holds', () => {
    const values = ids.map((id) => signatures.get(id)!.values);
    const { compare } = familyComparers(values, undefined);
    expect(compare(values[0], values[1])).toBe(minhashJaccard(values[0], values[1]));
    expect(compare(values[0], values[2])).toBeLessThan(0.3);
  });
});
