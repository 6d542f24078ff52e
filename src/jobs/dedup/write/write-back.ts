// The clusters dedup found (dedup/cluster/cluster-cut.ts), written into the index: every member given cluster_id,
// duplicate_of, is_canonical, cluster_size, max_similarity, canonical_similarity and best_match (partial
// updates); every document that has a near-duplicate but is in no cluster (its near-duplicates all went to
// canonicals it is not near enough to) written as the canonical of a cluster of its own, so that none is
// left without a trace; documents that left a cluster cleared, and the result checked with the engine.
import { CLUSTER_FIELDS, storedPath } from '../../../stored/layout.js';
import type { EngineClient } from '../../../engine/client.js';
import { type DocLocation, locationOf } from '../../../engine/doc-location.js';
import { scanIndex } from '../../../engine/scan.js';
import type { ErrorsFile } from '../../errors-file.js';
import type { DedupCluster } from '../cluster/cluster-list.js';
import { fieldWriter } from './field-writer.js';
import type { FactsLookup } from '../documents/facts.js';
import type { BestMatches } from '../verify/best-matches.js';
import { forCount, plural } from '../../../plural.js';

/** Who is in a cluster (the cut's output), and each document's best match (the verify stage's), by number in the run's numbering. */
export interface Membership {
  /** Whether a document is written with cluster fields (a member of a cluster, or a canonical of its own). */
  clustered(id: string): boolean;
  best: BestMatches;
  /** The documents with a near-duplicate that are in no cluster, by id and number: each written as a canonical of its own. */
  alone?: Iterable<[id: string, n: number]>;
}

/** Every cluster field cleared (null), as a document that leaves its cluster gets them. */
const CLEARED = Object.fromEntries(CLUSTER_FIELDS.map((name) => [name, null]));

/**
 * How the clusters are written: the index and prefix, the scan and bulk sizes, which documents an incremental run
 * decides, and the progress to tell.
 */
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
  /** The updates the clusters make (their members and the canonicals of their own): the write-back's total, with the documents cleared as they are found. */
  updates?: number;
  /** Documents written and acknowledged of the total so far: at the start, at most every PROGRESS_MS, and at the end. */
  onProgress?: (written: number, total: number) => void;
}

/** Milliseconds between two progress reports of the write-back. */
const PROGRESS_MS = 500;

/**
 * What the write-back did: documents written, failed and cleared, and whether the index now holds exactly the clusters.
 */
export interface WriteBackResult {
  written: number;
  failed: number;
  cleared: number;
  /** Nothing failed, and (full run) the documents holding a cluster_id are exactly the clusters' members. */
  complete: boolean;
  /** Bulk requests kept in flight, and what chose that number (none written: undefined). */
  inFlight?: string;
}

/**
 * The clusters written into the index, the family members alone written as canonicals of their own, the documents that
 * left a cluster cleared, and the result checked with the engine (the file header says what each gets).
 */
export async function writeBack(
  client: EngineClient,
  clusters: Iterable<DedupCluster>,
  membership: Membership,
  facts: FactsLookup,
  errors: ErrorsFile,
  settings: WriteBackSettings,
): Promise<WriteBackResult> {
  let cleared = 0;
  let reported = performance.now();
  const report = (written: number, force = false) => {
    const t = performance.now();
    if (!settings.onProgress || (!force && t - reported < PROGRESS_MS)) return;
    reported = t;
    settings.onProgress(written, (settings.updates ?? 0) + cleared);
  };
  report(0, true);
  const writer = await fieldWriter(client, errors, { ...settings, onWritten: (written) => report(written) });
  // Every member was read from the index, so its facts say where it lives; the index named is a last resort.
  const where = (id: string, n?: number): DocLocation => (n !== undefined && facts.at ? facts.at(n) : facts.get(id))?.location ?? { index: settings.index };
  // (The clusters' members by number as the list knows them, else looked up by id.)
  const best = (id: string, n = membership.best.numberOf(id)) => membership.best.of(n);
  let members = 0;
  for (const cluster of clusters) {
    members += cluster.members.length;
    for (let k = 0; k < cluster.members.length; k++) {
      const member = cluster.members[k];
      const n = cluster.numbers?.[k];
      const { similarity, partner } = best(member, n);
      await writer.update(member, where(member, n), {
        cluster_id: cluster.id,
        duplicate_of: member === cluster.canonical ? null : cluster.canonical,
        is_canonical: member === cluster.canonical,
        cluster_size: cluster.members.length,
        max_similarity: similarity,
        canonical_similarity: member === cluster.canonical ? null : cluster.similarity.get(member),
        best_match: partner ?? null,
      });
    }
  }
  for (const [id, n] of membership.alone ?? []) {
    members++;
    const { similarity, partner } = best(id, n);
    await writer.update(id, where(id, n), {
      cluster_id: id,
      duplicate_of: null,
      is_canonical: true,
      cluster_size: 1,
      max_similarity: similarity,
      canonical_similarity: null,
      best_match: partner ?? null,
    });
  }
  // Cluster fields left from an earlier run on documents that are in no cluster now.
  const clear = async (id: string, location: DocLocation) => {
    if (membership.clustered(id)) return;
    cleared++;
    await writer.update(id, location, CLEARED);
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
  report(writer.written, true);
  // Checked with the engine: the documents holding a cluster_id are exactly the clusters' members.
  const holding = settings.decided ? members : await client.count(settings.index, { exists: { field: storedPath(settings.prefix, 'cluster_id') } });
  if (holding !== members) {
    errors.add({ reason: `after the write-back ${plural(holding, 'document')} ${forCount(holding, 'holds', 'hold')} a cluster_id, but the clusters have ${plural(members, 'member')}; run dedup --full again` });
  }
  return { written: writer.written, failed: writer.failed, cleared, complete: writer.failed === 0 && holding === members, inFlight: writer.inFlight };
}
