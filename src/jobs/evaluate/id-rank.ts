// An evaluation's choices made by the documents alone: which documents are sampled, and which of a
// document's neighbours are kept, by a seeded hash of their ids. The engine's random_score mixes in the
// index name, the shard and the order the writes landed (_seq_no), and the order of equal scores is the
// shards' own: the same documents in another index, another engine or another number of shards were
// another sample, and the recommendation moved (0.7 on one shard, 0.85 on three).
import { createHash } from 'node:crypto';
import type { EngineClient } from '../../engine/client.js';
import { scanIndex } from '../../engine/scan.js';

/** A seeded rank of ids (or of a pair of ids): uniform, the same wherever the documents are. */
export function idRank(seed: number, ...ids: string[]): number {
  const digest = createHash('sha1').update(`${seed}\u0000${ids.join('\u0000')}`).digest();
  return digest.readUIntBE(0, 6);
}

/** Ranked ids in rank order, ties (practically none) by id. */
function byRank(a: { rank: number; id: string }, b: { rank: number; id: string }): number {
  return a.rank - b.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The `count` ids of `ranked` of lowest rank, in rank order. */
export function lowestRanked<T extends { rank: number; id: string }>(ranked: T[], count: number): T[] {
  return ranked.sort(byRank).slice(0, count);
}

const ID_PAGE = 5000;

/**
 * The `size` documents of the query with the lowest seeded rank of their id, in rank order: a uniform
 * sample that depends on the ids alone. It reads every id the query matches (no source), keeping at most
 * twice `size` of them at a time.
 */
export async function sampleByIdRank(client: EngineClient, index: string, query: Record<string, unknown>, size: number, seed: number): Promise<string[]> {
  let kept: Array<{ rank: number; id: string }> = [];
  for await (const page of scanIndex(client, { index, query, sourceIncludes: [], pageSize: ID_PAGE, pointInTime: client.pointInTime })) {
    for (const hit of page) kept.push({ rank: idRank(seed, hit._id), id: hit._id });
    if (kept.length > 2 * size) kept = lowestRanked(kept, size);
  }
  return lowestRanked(kept, size).map((k) => k.id);
}
