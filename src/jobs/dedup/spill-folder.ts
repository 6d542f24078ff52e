// A folder of dedup's own on local disk, for what it spills when an index is too large for memory (the
// signatures, the ids): made fresh with mkdtemp, every file in it created with O_EXCL (nothing planted is
// followed), removed when the run ends. A run killed before it could remove its folder leaves it behind:
// the next spill in the same place removes the folders of processes that are gone. Reads and writes are
// whole (a short read means the folder was changed under dedup, and is said).
import { closeSync, lstatSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statfsSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SPILL_PREFIX = 'near-dup-spill-';

export class SpillFolder {
  readonly path: string;
  private readonly files: number[] = [];

  /** `parent`: where the folder is made (default: the system's temporary folder). */
  constructor(parent: string = os.tmpdir()) {
    removeStaleSpills(parent);
    this.path = mkdtempSync(path.join(parent, `${SPILL_PREFIX}${process.pid}-`));
  }

  /** A new file in the folder, open for reading and writing (closed with the folder). */
  create(name: string): number {
    const fd = openSync(path.join(this.path, name), 'wx+', 0o600);
    this.files.push(fd);
    return fd;
  }

  /** Closes its files and removes the folder. */
  remove(): void {
    for (const fd of this.files.splice(0)) closeSync(fd);
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** Writes every byte, where the file is at (appending), or from `position`. */
export function writeAll(fd: number, bytes: Uint8Array, position?: number): void {
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at, position === undefined ? null : position + at);
}

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

/** The spill folders in `parent` of processes that no longer run (killed runs): removed, when they are folders of this user. */
function removeStaleSpills(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return; // made by mkdtemp below, or said there
  }
  for (const name of names) {
    const pid = Number(new RegExp(`^${SPILL_PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (!pid || pid === process.pid || isRunning(pid)) continue;
    const at = path.join(parent, name);
    const stat = lstatSync(at, { throwIfNoEntry: false });
    if (stat?.isDirectory() && stat.uid === process.getuid?.()) rmSync(at, { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
