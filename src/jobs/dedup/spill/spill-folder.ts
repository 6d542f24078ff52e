// A folder of dedup's own on local disk, for what it spills when an index is too large for memory (the
// signatures, the ids): made fresh with mkdtemp, every file in it created with O_EXCL (nothing planted is
// followed), removed when the run ends. A run killed before it could remove its folder leaves it behind:
// the next spill in the same place removes the folders whose runs are gone, told from live ones in any PID
// namespace (spill-liveness.ts). Reads and writes are whole (a short read means the folder was changed
// under dedup, and is said). A folder that cannot be made, and a disk that fills, are said in one line with
// the folder and the way out: dedup writes to the index only once its spill is written, so neither leaves
// anything half written there.
import { closeSync, lstatSync, mkdtempSync, openSync, readdirSync, readlinkSync, readSync, rmSync, statfsSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type OptionMessage, UserError } from '../../../errors.js';
import { BEAT_MS, type Holder, isAbandoned, OWN_SPACE, STALE_AFTER_MS, startBeating, stopBeating } from './spill-liveness.js';

const SPILL_PREFIX = 'near-dup-spill-';
/** A spill folder's name: its holder's pid, the tag of its host and PID namespace (none from older runs), mkdtemp's six characters. */
const SPILL_NAME = /^near-dup-spill-(\d+)-(?:([0-9a-f]{8})-)?[A-Za-z0-9]+$/;

/** How often this run touches its folder, and how long another run's must go untouched to be taken for abandoned (for tests; spill-liveness.ts). */
export interface SpillTiming {
  beatMs?: number;
  staleAfterMs?: number;
}

/** The spill folders this process holds, and the file behind each descriptor they made (named when its disk fills). */
const held = new Set<SpillFolder>();
const fileOf = new Map<number, { folder: SpillFolder; name: string }>();

/**
 * A run's own folder on local disk for what it spills, made fresh, its files created with O_EXCL, and removed at the
 * run's end; folders of runs that are gone are removed as one is made (the file header says how they are told).
 */
export class SpillFolder {
  readonly path: string;
  /** Bytes what spills here expects to write in all, when it knows (0: not known): said when the disk fills. */
  expectedBytes = 0;
  private readonly files: number[] = [];

  /** `parent`: where the folder is made (default: the system's temporary folder). */
  constructor(parent: string = os.tmpdir(), timing: SpillTiming = {}) {
    removeAbandonedSpills(parent, timing.staleAfterMs ?? STALE_AFTER_MS);
    this.path = madeIn(parent);
    startBeating(this.path, timing.beatMs ?? BEAT_MS);
    held.add(this);
  }

  /** A new file in the folder, open for reading and writing (closed with the folder). */
  create(name: string): number {
    const fd = openSync(path.join(this.path, name), 'wx+', 0o600);
    this.files.push(fd);
    fileOf.set(fd, { folder: this, name });
    return fd;
  }

  /** Closes its files and removes the folder. */
  remove(): void {
    stopBeating(this.path);
    held.delete(this);
    for (const fd of this.files.splice(0)) {
      fileOf.delete(fd);
      closeSync(fd);
    }
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** The run's own folder in `parent`, named for its holder; a parent that cannot hold one is said with the way out. */
function madeIn(parent: string): string {
  try {
    return mkdtempSync(path.join(parent, `${SPILL_PREFIX}${process.pid}-${OWN_SPACE ? `${OWN_SPACE}-` : ''}`));
  } catch (err) {
    const why = whyNoFolder(parent, (err as NodeJS.ErrnoException).code);
    if (why === undefined) throw err;
    throw new UserError(spillDirMessage(parent, why));
  }
}

/** What is wrong with a parent folder, by the error making a folder in it gave (ENOENT: see `missing`). */
const NO_FOLDER_BECAUSE: Readonly<Record<string, string>> = {
  ENOTDIR: 'not a folder',
  EROFS: 'on a read-only file system',
  EACCES: 'near-dup may not write there (permission denied)',
  EPERM: 'near-dup may not write there (permission denied)',
  ENOSPC: 'its disk is full',
  EDQUOT: 'its disk is full',
  ELOOP: 'a loop of symbolic links',
  ENAMETOOLONG: 'too long a path',
};

/** What is wrong with `parent` as a place for a folder, by the error making one gave; undefined for an error it does not explain. */
function whyNoFolder(parent: string, code: string | undefined): string | undefined {
  if (code === 'ENOENT') return missing(parent);
  return code !== undefined && Object.hasOwn(NO_FOLDER_BECAUSE, code) ? NO_FOLDER_BECAUSE[code] : undefined;
}

/** Why a folder could not be made in `parent` that the system says is not there. */
function missing(parent: string): string {
  try {
    const found = lstatSync(parent, { throwIfNoEntry: false });
    if (found?.isSymbolicLink()) return `a link to ${readlinkSync(parent)}, which does not exist`;
    // (/proc and the like: there, but no folder can be made in them.)
    if (found) return 'no folder can be made there';
  } catch {
    // said as missing
  }
  return 'no such folder';
}

/** A line naming `parent` (the option's value, or the system's temporary folder) and what is wrong, with the way out. */
function spillDirMessage(parent: string, why: string): OptionMessage {
  if (parent === os.tmpdir()) {
    return (o) => `the system's temporary folder ${parent} (where dedup spills without ${o('limits.spillDir')}): ${why}; give ${o('limits.spillDir')} a folder near-dup may write to, or set TMPDIR to one`;
  }
  return (o) => `${o('limits.spillDir')} ${parent}: ${why}; give a folder near-dup may write to, or leave the option out to use the system's temporary folder`;
}

/** Writes every byte, where the file is at (appending), or from `position`; a full disk is said with its folder and what the spill needs. */
export function writeAll(fd: number, bytes: Uint8Array, position?: number): void {
  let at = 0;
  try {
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at, position === undefined ? null : position + at);
  } catch (err) {
    if (!isDiskFull(err)) throw err;
    throw diskFull(fd, bytes.length - at);
  }
}

/**
 * Fills `into` from `position` of a spilled file, whole: a file that ends early was changed under dedup, and is said.
 */
export function readAll(fd: number, into: Uint8Array, position: number): void {
  for (let at = 0; at < into.length; ) {
    const read = readSync(fd, into, at, into.length - at, position + at);
    if (read === 0) throw new Error(`a file dedup spilled ended early (${position + at} bytes): its folder was changed while dedup ran`);
    at += read;
  }
}

/**
 * One step of the checks dedup keeps in memory of what it spilled (a multiply-rotate hash folded over 32-bit
 * values), so that a value read back that it did not write is found: `check` so far, the next value in.
 */
export function foldCheck(check: number, value: number): number {
  const h = Math.imul(check ^ value, 0xcc9e2d51);
  return ((h << 15) | (h >>> 17)) >>> 0;
}

/** Bytes free for this user on the file system of `folder`. */
export function freeBytes(folder: string): number {
  const stats = statfsSync(folder);
  return stats.bavail * stats.bsize;
}

/** Room every spill leaves free on its disk beyond what it plans to write there, at least. */
const DISK_MARGIN_BYTES = 1024 ** 3;

/** Bytes a spill may plan to write on the disk of `where` (a folder or a file): what is free (`free`, else asked of the system) less the margin. */
export function spillRoom(where: string, free = freeBytes(where)): number {
  return free - DISK_MARGIN_BYTES;
}

/**
 * The refusal of a spill that would not leave the margin free: what it would spill where (`spill`), the size
 * it `needs` and the bytes `free`, said, with the way out: a spill folder with room, or the memory `limit`
 * (whose `cost` an item is said after it) raised.
 */
export function spillTooLarge({ spill, needs, free, limit, cost }: { spill: string; needs: string; free: number; limit: string; cost?: string }): UserError {
  return new UserError(
    (o) =>
      `${spill}: ${needs}, and ${gigabytes(Math.max(0, free))} is free there; give ${o('limits.spillDir')} on a disk with room, or raise ${o(limit)} if memory allows${cost ? ` (${cost})` : ''}; dedup leaves ${DISK_MARGIN_BYTES / 1024 ** 3} GB of a spill's disk free`,
  );
}

/** Bytes said in gigabytes, to a tenth. */
export function gigabytes(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}

/**
 * Refuses, before it is written, what would not fit the disk of `folder`: `bytes` for `what`, said with
 * both sizes and the way out (nothing has been written to the index when dedup asks).
 */
export function requireRoom(folder: SpillFolder, bytes: number, what: string, free = freeBytes(folder.path)): void {
  if (bytes <= free) return;
  const parent = path.dirname(folder.path);
  throw new UserError(
    (o) =>
      `the disk of ${parent} has ${size(Math.max(0, free))} free, and dedup needs ${size(bytes)} more there for ${what}; nothing was written to the index: ${makeRoom(o)}`,
  );
}

function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** The disk of a spill file filled while `left` bytes were still to be written to it. */
function diskFull(fd: number, left: number): UserError {
  const file = fileOf.get(fd);
  const spill = file?.folder.path ?? folderOf(fd);
  const parent = spill ? path.dirname(spill) : undefined;
  // (A worker thread holds no folder of its own: what was written is not known there.)
  const written = parent && held.size > 0 ? bytesHeld(parent) : undefined;
  const expected = parent ? [...held].filter((f) => path.dirname(f.path) === parent).reduce((sum, f) => sum + f.expectedBytes, 0) : 0;
  const needs =
    written !== undefined && expected > written
      ? `about ${size(Math.max(left, expected - written))} more there (${size(expected)} in all, ${size(written)} written)`
      : `at least ${size(left)} more there${written === undefined ? '' : ` (beside the ${size(written)} written)`}`;
  const name = `${file?.name ?? 'a file'} of its spill${spill ? ` ${spill}` : ''}`;
  const free = parent ? ` (${size(Math.max(0, freeBytes(parent)))} free)` : '';
  return new UserError((o) => `the disk of ${parent ?? "dedup's spill"} is full${free}: dedup could not write ${name}, which needs ${needs}; nothing was written to the index: ${makeRoom(o)}`);
}

/**
 * A full disk said in a worker thread (band-sort.worker.ts) reaches this thread as a plain Error with its
 * message alone (all a thread's error keeps): made the UserError it was, the option named as the caller names it.
 */
export function fromWorker(err: unknown): unknown {
  if (!(err instanceof Error) || err instanceof UserError || !/^the disk of .* is full/.test(err.message)) return err;
  const message = err.message;
  return new UserError((o) => message.replaceAll('limits.spillDir', o('limits.spillDir')));
}

/** The folder of a file dedup opened by path (a worker's), where the system says (Linux); undefined elsewhere. */
function folderOf(fd: number): string | undefined {
  try {
    return path.dirname(readlinkSync(`/proc/self/fd/${fd}`));
  } catch {
    return undefined;
  }
}

/** Bytes in the spill folders this process holds in `parent`. */
function bytesHeld(parent: string): number {
  let bytes = 0;
  for (const folder of held) {
    if (path.dirname(folder.path) !== parent) continue;
    for (const name of readdirSync(folder.path)) bytes += lstatSync(path.join(folder.path, name), { throwIfNoEntry: false })?.size ?? 0;
  }
  return bytes;
}

function makeRoom(o: (key: string) => string): string {
  return `free room there, or give ${o('limits.spillDir')} a folder on a disk with room, and run the same command again`;
}

function size(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${Math.ceil(bytes / 1024)} KB`;
}

/** The spill folders in `parent` whose runs are gone (spill-liveness.ts): removed, when they are folders of this user. */
function removeAbandonedSpills(parent: string, staleAfterMs: number): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return; // made by mkdtemp next, or said there
  }
  for (const name of names) {
    const named = SPILL_NAME.exec(name);
    if (!named) continue;
    const holder: Holder = { pid: Number(named[1]), space: named[2] };
    if (holder.pid === process.pid && holder.space === OWN_SPACE) continue;
    const at = path.join(parent, name);
    const stat = lstatSync(at, { throwIfNoEntry: false });
    if (stat?.isDirectory() && stat.uid === process.getuid?.() && isAbandoned(holder, stat.mtimeMs, staleAfterMs)) rmSync(at, { recursive: true, force: true });
  }
}
