// The lock of a dedup run, kept in the engine: two runs writing the clusters of one index at once would mix
// them, so a second run is refused, the holder named. One document of the hidden index `near-dup-locks` per
// concrete index (a run over an alias and one over its index exclude each other), taken with `_create` or an
// index guarded by `if_seq_no`/`if_primary_term`, so that of two runs only one wins. Its lease is renewed every
// third of it and read against this machine's clock (the machines that run dedup must agree on the time well
// within a lease); a holder on this machine whose process is gone (same boot and pid namespace, no process of
// its pid started when it did) is taken over at once. Released by writing it free (no delete: the writes
// above need no other privilege).
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import type { EngineClient } from '../../../engine/client.js';
import { EngineResponseError } from '../../../engine/errors.js';
import { privilegeRefusal } from '../../../engine/refusal.js';
import { UserError } from '../../../errors.js';

/** The index near-dup keeps its locks in, unless told another. */
export const DEFAULT_LOCK_INDEX = 'near-dup-locks';
/** How long a lock outlives its holder's last renewal, by default. */
export const DEFAULT_LEASE_SECONDS = 60;

/** Where the locks are kept, and how long a lease lasts. */
export interface LockSettings {
  /** Where the locks are kept (default near-dup-locks). */
  index?: string;
  /** The lease (default 60 s): renewed every third of it while the run goes on; a killed run's lock is free this long after its last renewal. */
  leaseSeconds?: number;
}

/** What a run asks to lock and how it names itself to a run it refuses. */
export interface LockRequest {
  /** One id a thing locked (dedup-UUID for each concrete index). */
  keys: string[];
  /** What the holder does, as messages name it: `dedup of "INDEX"`. */
  what: string;
  /** The holder's settings, as messages name them. */
  settings: string;
}

/** A lock document as it is stored. */
interface LockDocument {
  what: string;
  host: string;
  pid: number;
  started_at: string;
  settings: string;
  /** Where a run on the same machine can tell whether the holder's process is gone (Linux only). */
  process: ProcessIdentity | null;
  /** This holder's own mark: a lock read back with it is this run's (a write retried after its answer was lost). */
  token: string;
  lease_seconds: number;
  renewed_at: string;
  expires_at: string;
  released_at: string | null;
}

/** A lock document's version, which a guarded write must name. */
type Version = { seqNo: number; primaryTerm: number };
type Held = Version & { key: string };
type Stored = Version & { source: LockDocument };

/** A process as the machine knows it: its boot, its pid namespace, and when it started (clock ticks since boot). */
interface ProcessIdentity {
  boot: string;
  pidNamespace: string;
  startedAt: string;
}

/** The locks a run holds in the engine, renewed while it goes on and let go at its end. */
export class RunLock {
  private readonly held: Held[] = [];
  private timer?: NodeJS.Timeout;
  private renewing?: Promise<void>;
  private lostReason?: string;
  private expiresAt = 0;
  /** What the run should say: locks of killed runs it took over. */
  readonly notes: string[] = [];

  private constructor(
    private readonly client: EngineClient,
    private readonly index: string,
    private readonly leaseMs: number,
    private readonly mine: LockDocument,
  ) {}

  /** Takes every key of the request, or none: refuses (UserError) naming the holder of the first that is taken. */
  static async take(client: EngineClient, request: LockRequest, settings: LockSettings = {}): Promise<RunLock> {
    const index = settings.index ?? DEFAULT_LOCK_INDEX;
    const leaseMs = (settings.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
    const now = new Date();
    const mine: LockDocument = {
      what: request.what,
      host: os.hostname(),
      pid: process.pid,
      started_at: now.toISOString(),
      settings: request.settings,
      process: processIdentity() ?? null,
      token: randomUUID(),
      lease_seconds: leaseMs / 1000,
      renewed_at: now.toISOString(),
      expires_at: new Date(now.getTime() + leaseMs).toISOString(),
      released_at: null,
    };
    const lock = new RunLock(client, index, leaseMs, mine);
    const found = await readLocks(client, index, request.keys, true);
    try {
      // In one order, so that two runs over overlapping indices cannot each hold a part and wait on the other.
      for (const key of [...request.keys].sort()) await lock.takeOne(key, found.get(key));
    } catch (err) {
      await lock.release();
      throw err;
    }
    lock.expiresAt = Date.parse(mine.expires_at);
    lock.schedule();
    return lock;
  }

  /** Throws when the lock was lost (taken over after the lease ran out, or not renewed in time): the run must not go on writing. */
  check(): void {
    if (this.lostReason === undefined && this.held.length > 0 && Date.now() > this.expiresAt) this.lostReason = `its lease ran out at ${new Date(this.expiresAt).toISOString()} before it could be renewed`;
    if (this.lostReason !== undefined) {
      throw new UserError(`this run's lock on ${this.mine.what} in ${this.index} was lost (${this.lostReason}), so it stopped: another run may be writing; run dedup again once it has ended`);
    }
  }

  /** Frees every key held (best effort: a lock not freed is free when its lease ends). */
  async release(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.renewing;
    const now = new Date().toISOString();
    const held = this.held.splice(0);
    await Promise.all(held.map((h) => this.put(h.key, { ...this.mine, renewed_at: now, expires_at: now, released_at: now }, h).catch(() => undefined)));
  }

  private async takeOne(key: string, current: Stored | undefined): Promise<void> {
    const gone = current !== undefined && processGone(current.source, this.mine);
    if (current && isLive(current.source) && !gone && current.source.token !== this.mine.token) throw refusal(current.source, key, this.index);
    try {
      this.held.push({ key, ...(await this.put(key, this.mine, current)) });
    } catch (err) {
      if (!(err instanceof EngineResponseError && err.statusCode === 409)) throw err;
      // Another run took it between the read and the write, or this run's own write was sent twice (a retry
      // after a lost answer): the lock as it is now says which.
      const now = (await readLocks(this.client, this.index, [key], false)).get(key);
      if (now?.source.token !== this.mine.token) throw now ? refusal(now.source, key, this.index) : err;
      this.held.push({ key, seqNo: now.seqNo, primaryTerm: now.primaryTerm });
      return;
    }
    if (current && current.source.released_at === null) {
      const was = current.source;
      const why = gone
        ? 'whose process is gone (killed)'
        : leaseImplausible(was, Date.now())
          ? `whose lease end (${was.expires_at}) lies further ahead than any run sets it (a damaged lock, or a clock far ahead)`
          : `whose lease ended at ${was.expires_at} without it being released (killed, or cut off from the engine)`;
      this.notes.push(`took over the lock of a ${was.what} on ${was.host} (pid ${was.pid}, started ${was.started_at}) ${why}; what it wrote is rewritten by this run`);
    }
  }

  /** Writes the lock of `key`: created when there is none (`guard` undefined), else only over the version read. */
  private async put(key: string, document: LockDocument, guard?: Version): Promise<Version> {
    const where = `/${encodeURIComponent(this.index)}/${guard ? '_doc' : '_create'}/${encodeURIComponent(key)}`;
    const answer = await this.client.request('PUT', where, document, guard && { if_seq_no: guard.seqNo, if_primary_term: guard.primaryTerm });
    return { seqNo: answer._seq_no, primaryTerm: answer._primary_term };
  }

  /** The next renewal, a third of the lease from now (not keeping the process alive for it). */
  private schedule(): void {
    this.timer = setTimeout(() => {
      this.renewing = this.renew().finally(() => {
        this.renewing = undefined;
        if (this.timer !== undefined && this.lostReason === undefined) this.schedule();
      });
    }, this.leaseMs / 3);
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    const now = new Date();
    const renewed = { ...this.mine, renewed_at: now.toISOString(), expires_at: new Date(now.getTime() + this.leaseMs).toISOString() };
    try {
      for (const h of this.held) Object.assign(h, await this.put(h.key, renewed, h));
      this.expiresAt = Date.parse(renewed.expires_at);
    } catch (err) {
      if (err instanceof EngineResponseError && err.statusCode === 409) {
        const key = this.held[0]?.key;
        const now = key ? (await readLocks(this.client, this.index, [key], false).catch(() => new Map<string, Stored>())).get(key) : undefined;
        this.lostReason = now ? `taken over by a ${now.source.what} on ${now.source.host}, pid ${now.source.pid}, after its lease ran out` : 'taken over after its lease ran out';
      }
      // Any other failure (the engine away for a moment): the next renewal tries again; check() says when the lease ran out meanwhile.
    }
  }
}

/**
 * The client, but each bulk request first checks that the lock is still held: a run paused past its lease
 * (whose lock another run may have taken over since) writes nothing more once it goes on. (A request already
 * sent when the pause began still lands: the engine has no way to refuse a write by a lock's owner.)
 */
export function writingUnder(lock: RunLock, client: EngineClient): EngineClient {
  return new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === 'bulkNdjson') {
        return (...args: Parameters<EngineClient['bulkNdjson']>) => {
          lock.check();
          return target.bulkNdjson(...args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A holder named, for a dry run that takes no lock: undefined when none of the keys is held. */
export async function lockHolder(client: EngineClient, keys: string[], settings: LockSettings = {}): Promise<string | undefined> {
  const index = settings.index ?? DEFAULT_LOCK_INDEX;
  let found: Map<string, Stored>;
  try {
    found = await readLocks(client, index, keys, false);
  } catch {
    return undefined; // no lock index, or no right to read it: a dry run goes on without knowing
  }
  const live = [...found.values()].find((s) => isLive(s.source));
  return live && `a ${live.source.what} on ${holderText(live.source)} holds the lock: what this dry run read may be half written by it`;
}

/** The locks of these keys that exist, read in real time; with `create`, a missing lock index is made first. */
async function readLocks(client: EngineClient, index: string, keys: string[], create: boolean): Promise<Map<string, Stored>> {
  let answer: { docs: Array<{ _id: string; found?: boolean; error?: { type?: string; reason?: string }; _source?: unknown; _seq_no?: number; _primary_term?: number }> };
  const path = `/${encodeURIComponent(index)}/_mget`;
  try {
    answer = await client.request('POST', path, { ids: keys });
  } catch (err) {
    if (!(create && err instanceof EngineResponseError && err.type === 'index_not_found_exception')) throw err;
    await createLockIndex(client, index);
    return new Map();
  }
  // A missing lock index may also be said per document (200, as the engines answer an _mget of one): no lock is held.
  if (answer.docs.some((d) => d.error?.type === 'index_not_found_exception')) {
    if (create) await createLockIndex(client, index);
    return new Map();
  }
  // A user who may not read the locks gets an error per document (200): a refusal naming the privilege, not locks that are free.
  const refused = answer.docs.find((d) => d.error !== undefined);
  if (refused) throw new EngineResponseError(privilegeRefusal(refused.error) ? 403 : 500, refused.error?.type, refused.error?.reason, 'POST', path, client.url, refused);
  const found = answer.docs.filter((d) => d.found && d._source);
  return new Map(found.map((d) => [d._id, { source: lockFromIndex(d._source), seqNo: d._seq_no as number, primaryTerm: d._primary_term as number }]));
}

/**
 * A lock document as read from the index, each field of the type a run writes: anyone who may write the lock
 * index may write anything there. A field of another type reads as what lets runs go on: a pid that names no
 * process (0, so no path is made of it), no process identity, a release (a damaged lock holds nothing).
 */
export function lockFromIndex(source: unknown): LockDocument {
  const doc = (typeof source === 'object' && source !== null ? source : {}) as Record<string, unknown>;
  const text = (key: string) => (typeof doc[key] === 'string' ? (doc[key] as string) : '');
  const written = doc.process as Record<string, unknown> | null | undefined;
  const identity = written && ['boot', 'pidNamespace', 'startedAt'].every((k) => typeof written[k] === 'string') ? (written as unknown as ProcessIdentity) : null;
  return {
    what: text('what') || 'dedup run',
    host: text('host'),
    pid: Number.isSafeInteger(doc.pid) && (doc.pid as number) > 0 ? (doc.pid as number) : 0,
    started_at: text('started_at'),
    settings: text('settings'),
    process: identity,
    token: text('token'),
    lease_seconds: typeof doc.lease_seconds === 'number' ? doc.lease_seconds : Number.NaN,
    renewed_at: text('renewed_at'),
    expires_at: text('expires_at'),
    released_at: doc.released_at === null ? null : text('released_at') || 'damaged',
  };
}

/** One shard, a copy where there is a second node, hidden from wildcards (a user's `*` does not find it), nothing indexed. */
async function createLockIndex(client: EngineClient, index: string): Promise<void> {
  try {
    await client.createIndex(index, {
      settings: { number_of_shards: 1, auto_expand_replicas: '0-1', 'index.hidden': true },
      mappings: { dynamic: false, properties: {} },
    });
  } catch (err) {
    // Made by another run meanwhile.
    if (!(err instanceof EngineResponseError && err.type === 'resource_already_exists_exception')) throw err;
  }
}

/** This process as the machine knows it (undefined where there is no /proc). */
function processIdentity(): ProcessIdentity | undefined {
  try {
    const startedAt = startTicks('self');
    return startedAt === undefined ? undefined : { boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), pidNamespace: readlinkSync('/proc/self/ns/pid'), startedAt };
  } catch {
    return undefined;
  }
}

/** When a process of this machine started, in clock ticks since boot (field 22 of its stat, counted after the command name, which may hold spaces); undefined when there is none. */
function startTicks(pid: 'self' | number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the holder ran on this machine, in this pid namespace, since its last boot, and its process is no more (or the pid is another's now). */
function processGone(holder: LockDocument, mine: LockDocument): boolean {
  const was = holder.process;
  const here = mine.process;
  if (!was || !here || holder.pid <= 0 || holder.host !== mine.host || was.boot !== here.boot || was.pidNamespace !== here.pidNamespace) return false;
  return startTicks(holder.pid) !== was.startedAt;
}

/** No run sets a lease longer than this; a lock read from the index is not trusted beyond it. */
const MAX_LEASE_MS = 3_600_000;
/** How far the clocks of two machines sharing an index may disagree. */
const CLOCK_SKEW_MS = 300_000;

/** Held by a run that may still be going: not released, its lease not ended, and its end no further ahead than a run sets it (a forged "9999-..." or a clock far ahead would block every run for good). */
export function isLive(lock: Pick<LockDocument, 'released_at' | 'expires_at' | 'lease_seconds'>, now = Date.now()): boolean {
  return lock.released_at === null && Date.parse(lock.expires_at) > now && !leaseImplausible(lock, now);
}

function leaseImplausible(lock: Pick<LockDocument, 'expires_at' | 'lease_seconds'>, now: number): boolean {
  const lease = Math.min(Number.isFinite(lock.lease_seconds) && lock.lease_seconds > 0 ? lock.lease_seconds * 1000 : MAX_LEASE_MS, MAX_LEASE_MS);
  return Date.parse(lock.expires_at) > now + lease + CLOCK_SKEW_MS;
}

function holderText(lock: LockDocument): string {
  return `${lock.host} (pid ${lock.pid}, started ${lock.started_at}, settings: ${lock.settings})`;
}

/** The one line that refuses a second run: who holds the lock, until when, and what to do. */
function refusal(lock: LockDocument, key: string, index: string): UserError {
  const seconds = Math.max(0, Math.ceil((Date.parse(lock.expires_at) - Date.now()) / 1000));
  return new UserError(
    `${lock.what} is running on ${holderText(lock)}; two runs at once would mix their clusters, so this one did nothing. ` +
      `Wait for that run to end; if it was killed, run this again after its lease ends at ${lock.expires_at} (in ${seconds} s; ` +
      `the lease is renewed while the run goes on) and the lock is taken over (lock ${key} in ${index})`,
  );
}
