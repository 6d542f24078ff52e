// The clusters dedup found, written into the index: each cluster's canonical document chosen by the
// user's rule, every member given cluster_id, duplicate_of, is_canonical, cluster_size and max_similarity
// (partial updates), documents that left a cluster cleared, and the result checked with the engine.
import { storedPath } from '../../stored/layout.js';
import type { EngineClient } from '../../engine/client.js';
import { type DocLocation, locationOf } from '../../engine/doc-location.js';
import { scanIndex } from '../../engine/scan.js';
import type { ErrorsFile } from '../errors-file.js';
import { fieldWriter } from './field-writer.js';
import type { PairVerifier } from './pair-verifier.js';
import type { FactsLookup } from './facts.js';

export type CanonicalRule = 'oldest' | 'newest' | 'longest' | { field: string; order: 'asc' | 'desc' };

export interface DedupCluster {
  id: string;
  canonical: string;
  members: string[];
}

/** The connected components of the verified pairs, largest first, each with its canonical document. */
export function buildClusters(verifier: PairVerifier, facts: FactsLookup, rule: CanonicalRule): DedupCluster[] {
  const clusters: DedupCluster[] = [];
  for (const members of verifier.clusters.groups()) {
    members.sort();
    const chosen = pickCanonical(members, facts, rule);
    clusters.push({ id: chosen, canonical: chosen, members });
  }
  return clusters.sort((a, b) => b.members.length - a.members.length || (a.id < b.id ? -1 : 1));
}

/** The member the rule prefers; a member without a value comes last in either order; ties go to the smallest id. */
export function pickCanonical(members: readonly string[], facts: FactsLookup, rule: CanonicalRule): string {
  const tokens = (id: string) => facts.get(id)?.tokens ?? 0;
  const byKey = (a: string, b: string, direction: 1 | -1) => {
    const x = facts.get(a)?.sortKey, y = facts.get(b)?.sortKey;
    const missingX = x === undefined || x === null, missingY = y === undefined || y === null;
    if (missingX || missingY) return missingX === missingY ? 0 : missingX ? 1 : -1;
    return direction * compareValues(x, y);
  };
  const sorted = [...members].sort((a, b) => {
    let order: number;
    if (rule === 'longest') order = tokens(b) - tokens(a);
    else if (rule === 'newest') order = byKey(a, b, -1);
    else if (rule === 'oldest') order = byKey(a, b, 1);
    else order = byKey(a, b, rule.order === 'asc' ? 1 : -1);
    return order || (a < b ? -1 : a > b ? 1 : 0);
  });
  return sorted[0];
}

/** Dates as dates, numbers and strings as they are. */
function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  const x = typeof a === 'string' && !Number.isNaN(Date.parse(a)) && typeof b === 'string' ? Date.parse(a) : a;
  const y = typeof b === 'string' && !Number.isNaN(Date.parse(b)) && typeof a === 'string' ? Date.parse(b) : b;
  return (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
}

export interface WriteBackSettings {
  index: string;
  prefix: string;
  pageSize: number;
  bulk?: { maxBytes?: number; maxOperations?: number; concurrency?: number };
  /**
   * The documents this run decides (incremental); undefined for a full run, where every document holding
   * a cluster_id is looked at.
   */
  decided?: ReadonlySet<string>;
}

export interface WriteBackResult {
  written: number;
  failed: number;
  cleared: number;
  /** Nothing failed, and (full run) the documents holding a cluster_id are exactly the clusters' members. */
  complete: boolean;
}

export async function writeBack(
  client: EngineClient,
  clusters: readonly DedupCluster[],
  /** The verifier that joined them: who is in a cluster, and each one's best similarity. */
  membership: PairVerifier,
  facts: FactsLookup,
  errors: ErrorsFile,
  settings: WriteBackSettings,
): Promise<WriteBackResult> {
  const writer = fieldWriter(client, errors, settings);
  // Every member was read from the index, so its facts say where it lives; the index named is a last resort.
  const where = (id: string): DocLocation => facts.get(id)?.location ?? { index: settings.index };
  let cleared = 0;
  let members = 0;
  for (const cluster of clusters) {
    members += cluster.members.length;
    for (const member of cluster.members) {
      await writer.update(member, where(member), {
        cluster_id: cluster.id,
        duplicate_of: member === cluster.canonical ? null : cluster.canonical,
        is_canonical: member === cluster.canonical,
        cluster_size: cluster.members.length,
        max_similarity: membership.bestMatch(member),
      });
    }
  }
  // Cluster fields left from an earlier run on documents that are in no cluster now.
  const clear = async (id: string, location: DocLocation) => {
    if (membership.clusters.joined(id)) return;
    cleared++;
    await writer.update(id, location, { cluster_id: null, duplicate_of: null, is_canonical: null, cluster_size: null, max_similarity: null });
  };
  if (settings.decided) {
    for (const id of settings.decided) if (facts.get(id)?.clusterId) await clear(id, where(id));
  } else {
    for await (const page of scanIndex(client, {
      index: settings.index,
      query: { exists: { field: storedPath(settings.prefix, 'cluster_id') } },
      sourceIncludes: [],
      pageSize: settings.pageSize,
      pointInTime: client.pointInTime,
    })) {
      for (const hit of page) await clear(hit._id, locationOf(hit));
    }
  }
  await writer.finish();
  // Checked with the engine: the documents holding a cluster_id are exactly the clusters' members.
  const holding = settings.decided ? members : await client.count(settings.index, { exists: { field: storedPath(settings.prefix, 'cluster_id') } });
  if (holding !== members) {
    errors.add({ reason: `after the write-back ${holding} documents hold a cluster_id, but the clusters have ${members} members; run dedup --full again` });
  }
  return { written: writer.written, failed: writer.failed, cleared, complete: writer.failed === 0 && holding === members };
}
