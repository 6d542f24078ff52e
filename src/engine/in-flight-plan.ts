// How many write requests to keep in flight, chosen from the cluster's shape (in-flight.ts then moves the
// number while a job runs).
//
// A bulk request is split by the engine into one request per shard it touches, each run on a thread of the
// node that holds that shard's primary (then its replicas). The cluster can work on as many shard requests
// at once as its data nodes have write threads (T, one per allocated processor by default); a request spread
// over an index of P primaries takes up to P of them. So about T / P requests keep every write thread busy,
// and twice that keeps them busy while each request is also being sent, parsed and answered:
//
//     limit = clamp(2 x ceil(T / P), 2, 16)
//
// (one node of 2 processors, 1 shard: 4; of 16 processors: 16; three nodes of 2, 3 shards: 4).
// `--concurrency` fixes the number instead.
import type { EngineClient } from './client.js';

/** Fewer requests in flight than this leave the engine idle between them. */
const MIN_LIMIT = 2;
/** More than this only queue up in the engine (and in this process's memory). */
const MAX_LIMIT = 16;
/** The cluster's shape is asked for at most this long; then the fallback. */
const SHAPE_TIMEOUT_MS = 5000;

/** How many writes a job keeps in flight, and why that many. */
export interface InFlightPlan {
  /** Requests in flight to start with, and at most. */
  limit: number;
  /** Adjusted to the answers (chosen from the cluster), or fixed (given). */
  adaptive: boolean;
  /** What it was chosen from, in a few words, for the job's report. */
  why: string;
}

/** What the choice is made of. */
export interface ClusterShape {
  dataNodes: number;
  /** Write threads over all data nodes. */
  writeThreads: number;
  /** Primary shards of the indices written to. */
  primaries: number;
}

/** The limit for a cluster's shape (see the formula above). */
export function limitFor(shape: ClusterShape): number {
  const perShardSet = Math.ceil(Math.max(1, shape.writeThreads) / Math.max(1, shape.primaries));
  return Math.min(MAX_LIMIT, Math.max(MIN_LIMIT, 2 * perShardSet));
}

/**
 * The plan for writing to `index` (undefined: any index, taken as one primary shard each): `given` when the
 * user chose (`option` names how), else from the cluster, else `fallback` when the cluster does not say.
 */
export async function planInFlight(
  client: Pick<EngineClient, 'request'>,
  index: string | undefined,
  given?: number,
  { option = '--concurrency', fallback = MIN_LIMIT }: { option?: string; fallback?: number } = {},
): Promise<InFlightPlan> {
  if (given !== undefined) return { limit: given, adaptive: false, why: `given (${option})` };
  const shape = await withTimeout(readShape(client, index), SHAPE_TIMEOUT_MS).catch(() => undefined);
  if (!shape) return { limit: fallback, adaptive: true, why: 'the cluster did not say its shape: the default' };
  const limit = limitFor(shape);
  const shards = index === undefined ? '' : `, ${shape.primaries} primary shard${shape.primaries === 1 ? '' : 's'}`;
  return { limit, adaptive: true, why: `${shape.dataNodes} data node${shape.dataNodes === 1 ? '' : 's'} with ${shape.writeThreads} write threads${shards}` };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

interface NodesInfo {
  nodes: Record<string, { roles?: string[]; thread_pool?: { write?: { size?: number; max?: number } }; os?: { allocated_processors?: number } }>;
}

/** Data nodes and their write threads (nodes info), primaries of `index` (its settings, every index behind the name). */
async function readShape(client: Pick<EngineClient, 'request'>, index: string | undefined): Promise<ClusterShape> {
  const info = await client.request<NodesInfo>('GET', '/_nodes/thread_pool,os');
  const data = Object.values(info.nodes).filter((node) => (node.roles ?? ['data']).some((role) => role === 'data' || role.startsWith('data_')));
  const threads = data.reduce((sum, node) => sum + (node.thread_pool?.write?.size ?? node.thread_pool?.write?.max ?? node.os?.allocated_processors ?? 1), 0);
  let primaries = 1;
  if (index !== undefined) {
    const settings = await client.request<Record<string, { settings?: { index?: { number_of_shards?: string } } }>>(
      'GET',
      `/${encodeURIComponent(index)}/_settings/index.number_of_shards`,
    );
    const counts = Object.values(settings).map((s) => Number(s.settings?.index?.number_of_shards ?? 1));
    // Writes spread over the largest index behind the name take the most threads at once.
    primaries = Math.max(1, ...counts.filter(Number.isFinite));
  }
  return { dataNodes: Math.max(1, data.length), writeThreads: Math.max(1, threads), primaries };
}
