// The warning a reviewer sees when a family chains much of the index, or a large cluster is loose (issue 49, item 5).
import { describe, expect, it } from 'vitest';
import { clusterWarnings } from '../../src/jobs/dedup/cluster/cluster-guard.js';

const base = { index: 'docs', documents: 7203, largestFamily: 12, minSimilarity: 0.5, params: 'white-space:norm-html:sha1:128;seed=1;scheme=affine32;b=26;r=4;simhash=w4m8;k=2;sample=4' };

describe('cluster warnings', () => {
  it('says nothing of small families and tight clusters', () => {
    expect(clusterWarnings({ ...base, largest: { size: 30, canonical: 'a', minCanonicalSimilarity: 0.9 } })).toEqual([]);
  });

  it('names a family that chains a large share of the index, with the commands that raise the bar', () => {
    const [warning] = clusterWarnings({ ...base, largestFamily: 6593 });
    expect(warning).toContain('6593 of the 7203 documents (92%)');
    expect(warning).toContain('near-dup dedup --index docs --min-similarity 0.7');
    expect(warning).toContain('near-dup annotate --index docs --field <text field> --condenser white-space-4-grams --template-share 0.005 --force');
    // Plain shingles: the template tokens only; signatures made so already: no signing advice.
    const shingles = base.params.replace('white-space:', 'white-space-4-grams:');
    expect(clusterWarnings({ ...base, params: shingles, largestFamily: 6593 })[0]).toContain('--field <text field> --template-share 0.005 --force');
    expect(clusterWarnings({ ...base, params: `${shingles};core=0123456789ab`, largestFamily: 6593 })[0]).not.toContain('near-dup annotate');
    expect(clusterWarnings({ ...base, documents: 400, largestFamily: 49 })).toEqual([]);
  });

  it('names a large cluster whose duplicates are far from its canonical', () => {
    const [warning] = clusterWarnings({ ...base, minSimilarity: 0.8, largest: { size: 746, canonical: 'gcloud-list', minCanonicalSimilarity: 0.51 } });
    expect(warning).toContain('(gcloud-list) holds 746 documents, some only 0.51');
    expect(warning).toContain('--min-similarity 0.9');
  });
});
