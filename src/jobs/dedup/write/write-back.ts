// The clusters dedup found (cluster/cluster-cut.ts), written into the index by partial updates: every member
// gets cluster_id, duplicate_of, is_canonical, cluster_size, max_similarity, canonical_similarity and
// best_match; a document with a near-duplicate but in no cluster (its near-duplicates all went to canonicals
// it is not near enough to) is written as the canonical of a cluster of its own, so that none is left without
// a trace; documents that left a cluster are cleared; the result is checked with the engine.
import { underPrefix } from '../../../annotation.js';
import type { EngineClient } from '../../../engine/client.js';
import { actionMeta, type DocLocation, locationOf } from '../../../engine/doc-location.js';
import { InFlightLimit } from '../../../engine/in-flight.js';
import { planInFlight } from '../../../engine/in-flight-plan.js';
import { scanIndex } from '../../../engine/scan.js';
import { forCount, plural } from '../../../plural.js';
import { CLUSTER_FIELDS, storedPath } from '../../../stored/layout.js';
import { BulkWriter } from '../../bulk-writer.js';
import type { ErrorsFile } from '../../errors-file.js';
import type { DedupCluster } from '../cluster/cluster-list.js';
import type { FactsLookup } from '../documents/facts.js';
import type { BestMatches } from '../verify/best-matches.js';

/** Where the updates of near-dup fields go (the index and the prefix), how they are sent in bulk, and where progress is told. */
export interface FieldWriterSettings {
  index: string;
  prefix: string;
  bulk?: { maxBytes?: number; maxOperations?: number; concurrency?: number };
  /** After each update the engine acknowledged, with the count so far (progress). */
  onWritten?: (written: number) => void;
}

/** One writer of partial updates (also containment's): queues them, counts what was written and what failed. */
export interface FieldWriter {
  /** Sets these fields (null clears one) under the prefix of document `id` where a search found it; waits when the queue is full. */
  update(id: string, location: DocLocation, fields: Record<string, unknown>): Promise<void>;
  /** Sends what is queued, then refreshes the index so that the engine's counts see it. */
  finish(): Promise<void>;
  readonly written: number;
  readonly failed: number;
  /** Bulk requests kept in flight, and what chose that number. */
  readonly inFlight: string;
}

/** A writer of near-dup fields over one bulk writer, its requests in flight planned for the index, each failure listed in the errors file. */
export async function fieldWriter(client: EngineClient, errors: ErrorsFile, settings: FieldWriterSettings): Promise<FieldWriter> {
  const counts = { written: 0, failed: 0 };
  const inFlight = new InFlightLimit(await planInFlight(client, settings.index, settings.bulk?.concurrency));
  const writer = new BulkWriter({
    send: (ndjson) => client.bulkNdjson(ndjson),
    ...settings.bulk,
    inFlight,
    retries: client.retries,
    onSuccess: () => settings.onWritten?.(++counts.written),
    onFailure: (op, reason, status) => {
      counts.failed++;
      errors.add({ id: op.id, status, reason });
    },
  });
  return {
    update: (id, location, fields) => writer.add({ id, action: { update: actionMeta(id, location) }, body: { doc: underPrefix(settings.prefix, fields) } }),
    finish: async () => {
      await writer.flush();
      await client.refresh(settings.index);
    },
    get inFlight() {
      return inFlight.describe();
    },
    get written() {
      return counts.written;
    },
    get failed() {
      return counts.failed;
    },
  };
}

/** What a write-back did, and whether the index holds exactly what it wrote (`holding`, counted by the engine, against `expected`). */
export function writeBackResult(writer: FieldWriter, cleared: number, holding: number, expected: number): WriteBackResult {
  return { written: writer.written, failed: writer.failed, cleared, complete: writer.failed === 0 && holding === expected, inFlight: writer.inFlight };
}

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

/** How the clusters are written, which documents an incremental run decides, and the progress to tell. */
export interface WriteBackSettings extends Omit<FieldWriterSettings, 'onWritten'> {
  pageSize: number;
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

/** What the write-back did, and whether the index now holds exactly the clusters. */
export interface WriteBackResult {
  written: number;
  failed: number;
  cleared: number;
  /** Nothing failed, and (full run) the documents holding a cluster_id are exactly the clusters' members. */
  complete: boolean;
  /** Bulk requests kept in flight, and what chose that number (none written: undefined). */
  inFlight?: string;
}

/** Writes the clusters into the index and checks the result with the engine (the file header says what each gets). */
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
  // A member, or a document alone as the canonical of a cluster of its own (`clusterId` and `canonical` its id, size 1).
  const writeMember = (id: string, n: number | undefined, clusterId: string, canonical: string, size: number, toCanonical?: number) => {
    const { similarity, partner } = best(id, n);
    const isCanonical = id === canonical;
    return writer.update(id, where(id, n), {
      cluster_id: clusterId,
      duplicate_of: isCanonical ? null : canonical,
      is_canonical: isCanonical,
      cluster_size: size,
      max_similarity: similarity,
      canonical_similarity: isCanonical ? null : toCanonical,
      best_match: partner ?? null,
    });
  };
  let members = 0;
  for (const cluster of clusters) {
    members += cluster.members.length;
    for (const [k, member] of cluster.members.entries()) {
      await writeMember(member, cluster.numbers?.[k], cluster.id, cluster.canonical, cluster.members.length, cluster.similarity.get(member));
    }
  }
  for (const [id, n] of membership.alone ?? []) {
    members++;
    await writeMember(id, n, id, id, 1);
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
  return writeBackResult(writer, cleared, holding, members);
}
