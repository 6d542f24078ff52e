// The warning a reviewer sees when a family chains much of the index, or a large cluster is loose (issue 49, item 5).
import { describe, expect, it } from 'vitest';
import { clusterWarnings } from '../../src/jobs/dedup/cluster-guard.js';

const base = { index: 'docs', documents: 7203, largestFamily: 12, minSimilarity: 0.5 };

describe('cluster warnings', () => {
  it('says nothing of small families and tight clusters', () => {
    expect(clusterWarnings({ ...base, largest: { size: 30, canonical: 'a', minCanonicalSimilarity: 0.9 } })).toEqual([]);
  });

  it('names a family that chains a large share of the index, with the commands that raise the bar', () => {
    const [warning] = clusterWarnings({ ...base, largestFamily: 6593 });
    expect(warning).toContain('6593 of the 7203 documents (92%)');
    expect(warning).toContain('near-dup dedup --index docs --min-similarity 0.7');
    expect(warning).toContain('--condenser white-space-5-grams --force');
    expect(clusterWarnings({ ...base, documents: 400, largestFamily: 49 })).toEqual([]);
  });

  it('names a large cluster whose duplicates are far from its canonical', () => {
    const [warning] = clusterWarnings({ ...base, minSimilarity: 0.8, largest: { size: 746, canonical: 'gcloud-list', minCanonicalSimilarity: 0.51 } });
    expect(warning).toContain('(gcloud-list) holds 746 documents, some only 0.51');
    expect(warning).toContain('--min-similarity 0.9');
  });
});
