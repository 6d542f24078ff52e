// Template tokens: the token hashes that occur in more than a share of the distinct texts of a sample of
// an index's documents (the shingles of shared headings, flag sections, notices, licence footers; a text
// copied many times is counted once). Left out of the MinHash,
// two pages of one template stop looking alike for what they share with every other page of it; on the
// labelled templated corpus, word 4-shingles without those in more than 5% of the documents took pair
// precision from 0.48 to 0.89 at the same recall (scripts/bench/quality/shingle_curves.py). The set is
// named by a digest of its values, which the params keyword records, so that whoever signs a query for
// the index (similar, the proxy) leaves out the very same tokens.
import { hash } from 'node:crypto';
import { fmix32 } from './minhash.js';
import { DEFAULT_MAX_TRACKED, TokenCounts } from './token-counts.js';

/** The default share: a token in more than 5% of the sampled documents is template text. */
export const DEFAULT_TEMPLATE_SHARE = 0.05;
/** A token must be seen in at least this many sampled documents, whatever the share: 5% of a tiny sample says nothing. */
export const DEFAULT_TEMPLATE_MIN_COUNT = 3;
/** A document keeps all its tokens when fewer than this many would remain without the template ones... */
export const TEMPLATE_KEEP_MIN = 5;
/** ...or fewer than this share of its distinct tokens: a page that is all template is still its template. */
export const TEMPLATE_KEEP_SHARE = 0.1;

/**
 * A set of template token hashes and how it was drawn. Plain data (it crosses to worker threads and into
 * the index mapping's `_meta` as it is).
 */
export interface TemplateTokens {
  /** The sorted, distinct token hashes (unsigned 32-bit). */
  hashes: Uint32Array;
  /** 12 hex digits of the SHA-1 of the sorted hashes (little-endian bytes): the set's name in the params keyword. */
  digest: string;
  /** A token in more than this share of the sampled documents is in the set. */
  share: number;
  /** ...and in at least this many of them. */
  minCount: number;
  /** How many documents the sample had. */
  sample: number;
}

/** The name of a set of token hashes (sorted and distinct). */
export function templateDigest(sorted: Uint32Array): string {
  const le = new Uint8Array(sorted.length * 4);
  const view = new DataView(le.buffer);
  for (let i = 0; i < sorted.length; i++) view.setUint32(i * 4, sorted[i], true);
  return hash('sha1', le).slice(0, 12);
}

/** A template set from its hashes (in any order, repeats allowed) and how they were drawn. */
export function templateTokens(hashes: ArrayLike<number>, drawn: { share: number; minCount: number; sample: number }): TemplateTokens {
  const sorted = Uint32Array.from(hashes).sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i];
  const distinct = sorted.slice(0, n);
  return { hashes: distinct, digest: templateDigest(distinct), share: drawn.share, minCount: drawn.minCount, sample: drawn.sample };
}

/** Checks a share and a minimum count, naming the value and what is valid. */
export function checkTemplateDraw(share: number, minCount: number): void {
  if (!(share > 0 && share < 1)) throw new RangeError(`template share must be a number above 0 and below 1 (0.05: tokens in more than 5% of the documents), got ${share}`);
  if (!Number.isInteger(minCount) || minCount < 1) throw new RangeError(`template minimum count must be a whole number of 1 or more, got ${minCount}`);
}

/**
 * Counts, over a sample of documents, in how many each token hash occurs; `result()` keeps those in more
 * than `share` of the documents and in at least `minCount`. The counts are held in bounded memory
 * (token-counts.ts: at most `maxTracked` distinct tokens, the rarest dropped when full).
 */
export class TemplateSampler {
  private readonly counts: TokenCounts;
  private docs = 0;
  /** The texts counted: a text many documents hold (exact copies) is counted once (`add`). */
  private texts = 0;
  private readonly seen = new Set<number>();

  constructor(
    private readonly share = DEFAULT_TEMPLATE_SHARE,
    private readonly minCount = DEFAULT_TEMPLATE_MIN_COUNT,
    maxTracked = DEFAULT_MAX_TRACKED,
  ) {
    checkTemplateDraw(share, minCount);
    this.counts = new TokenCounts(maxTracked);
  }

  /** How many documents were added. */
  get documents(): number {
    return this.docs;
  }

  /** How many documents a count may be short by, the rarest tokens having been dropped to bound memory (0: exact). */
  get undercount(): number {
    return this.counts.undercount;
  }

  /**
   * Adds one document's token hashes (the first `count`; repeats within it count once). A set of tokens
   * added before (an exact copy: a text syndicated, mailed to many, mirrored) is not counted again: copied
   * in more than the share of the index, a text would be all template, and its edited copies, whose own
   * tokens are only their edits, would be near none of its copies nor of each other. Past SEEN_TEXTS
   * distinct texts, copies count as they come.
   */
  add(hashes: ArrayLike<number>, count = hashes.length): void {
    this.docs++;
    const key = setKey(hashes, count);
    if (this.seen.has(key)) return;
    if (this.seen.size < SEEN_TEXTS) this.seen.add(key);
    const text = ++this.texts;
    for (let i = 0; i < count; i++) this.counts.add(hashes[i] >>> 0, text);
  }

  /** The template set of the documents added so far: the share is of the distinct texts among them. */
  result(): TemplateTokens {
    const above = this.share * this.texts;
    const kept: number[] = [];
    this.counts.forEach((h, c) => {
      if (c > above && c >= this.minCount) kept.push(h);
    });
    return templateTokens(kept, { share: this.share, minCount: this.minCount, sample: this.docs });
  }
}

/** How many distinct texts a sampler remembers, to count each once (8 to 40 bytes each). */
const SEEN_TEXTS = 1 << 21;

/** A 52-bit key of a set of token hashes, whatever their order: two sums of differently mixed hashes, and the count. */
function setKey(hashes: ArrayLike<number>, count: number): number {
  let a = count;
  let b = 0;
  for (let i = 0; i < count; i++) {
    a = (a + fmix32((hashes[i] ^ 0x9e3779b9) >>> 0)) >>> 0;
    b = (b + fmix32((hashes[i] + 0x85ebca6b) >>> 0)) >>> 0;
  }
  return a * 0x100000 + (b >>> 12);
}

/**
 * Membership in a template set, asked once per distinct token of every document signed: an open-addressing
 * table (a JS Set of numbers above 2^30 boxes each one).
 */
export class TemplateFilter {
  private readonly table: Uint32Array;
  private readonly used: Uint8Array;
  private readonly mask: number;

  constructor(readonly template: TemplateTokens) {
    let slots = 16;
    while (slots < template.hashes.length * 2) slots *= 2;
    this.table = new Uint32Array(slots);
    this.used = new Uint8Array(slots);
    this.mask = slots - 1;
    for (const h of template.hashes) {
      let slot = mix(h) & this.mask;
      while (this.used[slot] && this.table[slot] !== h) slot = (slot + 1) & this.mask;
      this.used[slot] = 1;
      this.table[slot] = h;
    }
  }

  has(h: number): boolean {
    let slot = mix(h) & this.mask;
    while (this.used[slot]) {
      if (this.table[slot] === h) return true;
      slot = (slot + 1) & this.mask;
    }
    return false;
  }

  /**
   * Narrows a document's `count` distinct token hashes, in place, to those the MinHash is made of: the
   * ones that are not template tokens, or all of them when fewer than TEMPLATE_KEEP_MIN or
   * TEMPLATE_KEEP_SHARE of them would remain. Gives how many there are now, first in `hashes`. One look-up
   * a token: the kept ones are swapped to the front, so all are still there, in another order (which a
   * MinHash does not see), when too few are kept.
   */
  narrow(hashes: Uint32Array, count: number): number {
    const kept = this.partition(hashes, count);
    return keepsEnough(kept, count) ? kept : count;
  }

  /** Puts a document's `count` distinct token hashes that are not template tokens first, in place; gives how many there are. */
  partition(hashes: Uint32Array, count: number): number {
    let kept = 0;
    for (let i = 0; i < count; i++) {
      const h = hashes[i];
      if (this.has(h)) continue;
      hashes[i] = hashes[kept];
      hashes[kept++] = h;
    }
    return kept;
  }
}

/** Whether `kept` of a document's `distinct` tokens are enough to be signed without the template ones. */
export function keepsEnough(kept: number, distinct: number): boolean {
  return kept >= TEMPLATE_KEEP_MIN && kept >= TEMPLATE_KEEP_SHARE * distinct;
}

// A slot is a mix of the hash with a key drawn when the process starts (as distinct.ts does): the set and
// the documents asked about are both written by whoever writes documents, so chosen hashes must not be able
// to pile into one run of the table.
const SLOT_KEY = globalThis.crypto.getRandomValues(new Uint32Array(1))[0];
const mix = (h: number): number => fmix32((h ^ SLOT_KEY) >>> 0);
