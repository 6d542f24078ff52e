// Whether a spill folder (spill-folder.ts) still belongs to a running dedup, as told by any run that shares
// its parent folder, whichever PID namespace (container) either runs in. A pid alone cannot tell: a run in
// a container has a pid that the host or another container does not see, or sees as another process, and
// a run that took such a live spill for a dead one deleted it under its holder. So:
//  - a folder's name says who holds it: its pid and a tag of its host and PID namespace;
//  - its holder touches the folder (its modification time) every few seconds, from a thread of its own, so
//    that the main thread's long synchronous stretches (a band sorted, ids indexed) never pause it;
//  - a folder is abandoned when its holder is known dead (the same host and namespace, and no such pid), or,
//    when the holder may run where its pid cannot be seen, once the folder has gone untouched for the stale
//    period. A pid that runs here always keeps its folder (a stopped run is still a run).
// Node 20 has no flock(2); proper-lockfile refreshes its lock from the main thread's timers, which dedup's
// sorts hold up for longer than a stale period should be.
import { createHash } from 'node:crypto';
import { readlinkSync, utimesSync } from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';

/** How often a holder touches its folders, by default. */
export const BEAT_MS = 10_000;
/** How long a folder whose holder may run in another namespace must go untouched to be abandoned, by default. */
export const STALE_AFTER_MS = 120_000;

/** This process's host and PID namespace, as 8 hex digits; undefined where the namespace cannot be read. */
export const OWN_SPACE: string | undefined = spaceTag();

function spaceTag(): string | undefined {
  let namespace: string;
  try {
    // Other systems than Linux have one pid space a host.
    namespace = process.platform === 'linux' ? readlinkSync('/proc/self/ns/pid') : 'host';
  } catch {
    return undefined;
  }
  return createHash('sha256').update(`${os.hostname()}\0${namespace}`).digest('hex').slice(0, 8);
}

/** Who holds a folder, read from its name: its pid, and the tag of its host and namespace (older runs named none). */
export interface Holder {
  pid: number;
  space?: string;
}

/** Whether a folder held by `holder`, last touched at `touchedMs`, is abandoned (see the head of this file). */
export function isAbandoned(holder: Holder, touchedMs: number, staleAfterMs: number, now = Date.now()): boolean {
  if (isRunning(holder.pid)) return false;
  if (holder.space !== undefined && holder.space === OWN_SPACE) return true;
  return now - touchedMs > staleAfterMs;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// The thread's whole code, a module of its own (whatever flags the process was started with): a timer a
// folder, each touching it (a folder gone is let be).
const BEATER = new URL(
  `data:text/javascript,${encodeURIComponent(`
import { parentPort } from 'node:worker_threads';
import { utimesSync } from 'node:fs';
const timers = new Map();
parentPort.on('message', ({ folder, beatMs }) => {
  clearInterval(timers.get(folder));
  timers.delete(folder);
  if (beatMs > 0) timers.set(folder, setInterval(() => { const now = new Date(); try { utimesSync(folder, now, now); } catch {} }, beatMs));
});`)}`,
);

/**
 * One thread for every folder this process holds, started with the first and kept, idle, until the process
 * ends (it does not keep the process alive), so that the descriptors and memory it takes (about 10 MB) change
 * once.
 */
let beater: { worker: Worker; online: Promise<void> } | undefined;
const beating = new Map<string, number>();
/** Where no thread could be started: the folders touched from this thread's timers instead. */
const fallback = new Map<string, NodeJS.Timeout>();

/** Touches `folder` every `beatMs` from now on, until `stopBeating`. */
export function startBeating(folder: string, beatMs: number = BEAT_MS): void {
  beating.set(folder, beatMs);
  beater ??= startBeater();
  beater.worker.postMessage({ folder, beatMs });
}

/** Stops touching `folder` (its run is removing it), on the thread and on the fallback timer alike. */
export function stopBeating(folder: string): void {
  if (!beating.delete(folder)) return;
  clearInterval(fallback.get(folder));
  fallback.delete(folder);
  beater?.worker.postMessage({ folder, beatMs: 0 });
}

/** Once the thread runs (for tests that count the descriptors a process holds). */
export function beaterOnline(): Promise<void> {
  return (beater ??= startBeater()).online;
}

function startBeater(): { worker: Worker; online: Promise<void> } {
  const worker = new Worker(BEATER);
  worker.unref();
  const online = new Promise<void>((resolve) => {
    worker.once('online', resolve);
    worker.on('error', () => {
      beater = undefined;
      for (const [held, every] of beating) beatHere(held, every);
      resolve();
    });
  });
  return { worker, online };
}

function beatHere(folder: string, beatMs: number): void {
  if (!fallback.has(folder)) fallback.set(folder, setInterval(() => touch(folder), beatMs).unref());
}

/** The folder's modification time set to now (a folder gone is let be). */
function touch(folder: string): void {
  const now = new Date();
  try {
    utimesSync(folder, now, now);
  } catch {
    // gone: let be
  }
}
