// How dedup's find is split between processes that share only the engine (--share K/N): the 32-bit hashes of the
// band keys are cut into N ranges of equal width and share K verifies the buckets whose hash is in range K, so each
// bucket is one share's and the shares' pairs together are one process's. The shares of one run must read the same
// signatures with the same settings, the run's identity, whose digest names every document they write to the pairs
// index: shares of another run (other params, another bar, the index changed in between) never mix. Pure.
import { createHash } from 'node:crypto';
import { UsageError } from '../../../errors.js';
import type { DedupRunIdentity } from '../state/journal.js';

/** Shares a run may be split into: more than a few thousand processes is a mistake, not a plan. */
export const MAX_SHARES = 4096;

/** This process's share of a run: share `number` (1-based, as the user writes it) of `count`. */
export interface SharePlan {
  number: number;
  count: number;
}

/** `--share K/N`, checked: 1 <= K <= N <= MAX_SHARES. */
export function parseShare(text: string): SharePlan {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const number = m ? Number(m[1]) : Number.NaN;
  const count = m ? Number(m[2]) : Number.NaN;
  if (!m || number < 1 || number > count || count > MAX_SHARES) {
    throw new UsageError((o) => `${o('share')} must be K/N, this process's share K of N (1 <= K <= N <= ${MAX_SHARES}), e.g. ${o('share')} 2/3; got "${text}"`);
  }
  return { number, count };
}

/** `--from-shares N`, checked. */
export function checkShareCount(count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > MAX_SHARES) {
    throw new UsageError((o) => `${o('fromShares')} must be the number of shares the find was split into (a whole number from 1 to ${MAX_SHARES}), got ${count}`);
  }
}

/** `--pairs-index NAME`: a name the engines accept for a new index (no pattern, no alias list). */
export function checkPairsIndexName(name: string | undefined, index: string): void {
  if (name === undefined || name === '') throw new UsageError((o) => `${o('share')} and ${o('fromShares')} need ${o('pairsIndex')} NAME: the index where the shares write their verified pairs`);
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(name) || name.length > 200) {
    throw new UsageError((o) => `${o('pairsIndex')} must be a plain index name (lowercase letters, digits, '.', '_', '-'; no pattern or comma), got "${name}"`);
  }
  if (name === index) throw new UsageError((o) => `${o('pairsIndex')} must name an index of its own, not the index deduplicated ("${index}")`);
  // Inside the pattern deduplicated, the pairs index would be one of its indices once the first share made
  // it: the shares that started before and after would see other uuids, and so be of different runs.
  if (matchesIndexPattern(name, index)) throw new UsageError((o) => `${o('pairsIndex')} "${name}" is matched by the index deduplicated ("${index}"): give it a name outside that pattern`);
}

/** Whether an index expression (names and * patterns, comma-separated, a leading - excluding) takes this index name. */
export function matchesIndexPattern(name: string, expression: string): boolean {
  let taken = false;
  for (const [at, part] of expression.split(',').map((p, i) => [i, p.trim()] as const)) {
    const exclude = at > 0 && part.startsWith('-');
    const pattern = exclude ? part.slice(1) : part;
    const regex = new RegExp(`^${pattern.split('*').map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    if (regex.test(name)) taken = !exclude;
  }
  return taken;
}

/** The key hashes (unsigned) a share verifies: [lo, hi). */
export interface KeyRange {
  lo: number;
  hi: number;
}

const SPACE = 2 ** 32;

/** Share K of N: the K-th of N ranges of equal width (the last one ends at 2^32). */
export function keyRange(share: SharePlan): KeyRange {
  return { lo: Math.floor(((share.number - 1) * SPACE) / share.count), hi: Math.floor((share.number * SPACE) / share.count) };
}

/** Whether a key hash (signed or unsigned 32-bit) is in the range. */
export function inRange(range: KeyRange, hash: number): boolean {
  const h = hash >>> 0;
  return h >= range.lo && h < range.hi;
}

/** What must be equal for shares to be shares of one run: what a resumed run must share with the run it continues, and more. */
export interface ShareRunIdentity extends Omit<DedupRunIdentity, 'pass'> {
  shares: number;
  /** Documents in scope when the share read them, and the latest annotated_at among them: the index unchanged. */
  documents: number;
  lastAnnotatedAt: string | null;
}

/** The keys of an identity, in the order they are hashed and compared. */
const IDENTITY_KEYS: ReadonlyArray<keyof ShareRunIdentity> = ['index', 'uuids', 'params', 'prefix', 'minSimilarity', 'bucketChunk', 'shares', 'documents', 'lastAnnotatedAt'];

/** The run's name: 16 hex digits of the SHA-256 of its identity (the same in every process that computes it). */
export function runName(identity: ShareRunIdentity): string {
  const canonical = JSON.stringify(IDENTITY_KEYS.map((k) => [k, identity[k]]));
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/** The keys in which two identities differ. */
export function identityDifferences(a: ShareRunIdentity, b: Record<string, unknown>): string[] {
  return IDENTITY_KEYS.filter((k) => a[k] !== b[k]);
}

/** The id of share K's progress marker in the pairs index. */
export function markerId(run: string, share: SharePlan): string {
  return `${run}-share-${share.number}-of-${share.count}`;
}

/** The id of one page of a share's pairs of one band: the same in every attempt, so that a redone band overwrites it. */
export function pageId(run: string, share: SharePlan, band: number, page: number): string {
  return `${markerId(run, share)}-band-${band}-page-${page}`;
}

/** "2/3". */
export function shareName(share: SharePlan): string {
  return `${share.number}/${share.count}`;
}
