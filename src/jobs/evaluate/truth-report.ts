// evaluate --truth-field's report: the documents read (truth-read.ts) scored against their sources
// (truth-scores.ts), with the numbers behind each figure, what was compared and what it cost.
import { documentFrequency, TRUTH_SIMILARITY } from './shingle-sets.js';
import type { TruthDocs } from './truth-read.js';
import { type ClusterScores, RECALL_FROM, SAME_TEXT, scoreClusters, truthOf } from './truth-scores.js';

/** `evaluate --truth-field`'s report: the scores, the truth they were measured against, and what it cost. */
export interface TruthReport {
  truthField: string;
  similarity: string;
  compared: string;
  documents: { evaluated: number; inClusters: number; withoutText: TruthDocs['withoutText']; withoutSource: TruthDocs['withoutSource'] };
  truth: { sources: number; groups: number; crossSourcePairsAtSameText: number; recallPairs: number; mustJoinPairs: number; groupsWithSameText: number; recallFrom: number; sameText: number };
  scores: Omit<ClusterScores, 'largest'> & { largest: { clusterId: string | null; size: number; groups: number; sources: number; example: string | null } };
  cost: { seconds: number; shingles: number; setBytes: number; countTableBytes: number };
}

/** What the truth compared, in words, for the report. */
export const COMPARED =
  `every pair of documents at exact J >= ${SAME_TEXT} in the index, across sources too, and every pair at J >= ${RECALL_FROM} within each truth group, ` +
  'found exactly by prefix filtering (the rarest shingles of each document looked up in the others; no MinHash, bands or clusters involved), each candidate pair compared on its whole shingle sets';

/** The documents read scored against their sources, with the numbers behind each figure. */
export function truthReport(docs: TruthDocs, truthField: string): TruthReport {
  const started = performance.now();
  const { df, bytes } = documentFrequency(docs.sets);
  const truth = truthOf(docs.sets, docs.labels, df);
  const scores = scoreClusters(docs.clusters, truth);
  const { key: clusterId, ...largest } = scores.largest;
  const example = clusterId === null ? null : docs.ids[docs.clusters.indexOf(clusterId)];
  const shingles = docs.sets.reduce((n, s) => n + s.length, 0);
  return {
    truthField,
    similarity: TRUTH_SIMILARITY,
    compared: COMPARED,
    documents: { evaluated: docs.ids.length, inClusters: scores.clustered, withoutText: docs.withoutText, withoutSource: docs.withoutSource },
    truth: {
      sources: truth.sources,
      groups: truth.groups,
      crossSourcePairsAtSameText: truth.crossSource,
      recallPairs: truth.recallPairs.length,
      mustJoinPairs: truth.mustJoin.length,
      groupsWithSameText: truth.groupsWithSameText,
      recallFrom: RECALL_FROM,
      sameText: SAME_TEXT,
    },
    scores: { ...scores, largest: { clusterId, ...largest, example } },
    cost: { seconds: (performance.now() - started) / 1000, shingles, setBytes: shingles * 4, countTableBytes: bytes },
  };
}
