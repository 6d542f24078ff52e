// The signatures dedup verifies with: decoded from the stored fields, kept in a bounded cache (the
// documents met recently), and read from the index a thousand at a time when the cache no longer has
// them. Beside them, the few facts about every document met that the clusters need.
import { valueAt } from '../../../annotation.js';
import type { DocLocation } from '../../../engine/doc-location.js';
import { StoredLayout, storedPath } from '../../../stored/layout.js';
import { checkStored, StoredProblem, storedCore, storedIn } from '../../../stored/read.js';
import { withCore } from '../../../sketch/core-similarity.js';
import { minhashValues, minhashValuesScratch } from '../../../sketch/lean-minhash.js';
import type { Hash64 } from '../../../sketch/simhash.js';
import { parseSimhash } from '../../../sketch/simhash-doc.js';
import { type DocIds, DocNumbers } from './doc-numbers.js';
import { FactsTable } from './facts.js';

/** What verification needs of a document: about 1 KB. */
export interface StoredSignature {
  values: Uint32Array;
  /** As stored (hex), or as two 32-bit halves. */
  simhash: string | Hash64;
  /** A 32-bit hash of each band key, to tell whether two documents met in an earlier band. */
  bands: Int32Array;
}

/** A document's stored fields, as a signature reader returns them. */
export interface StoredDocument {
  id: string;
  /** Where a search found it: its concrete index and routing. */
  location: DocLocation;
  source: Record<string, unknown>;
}

/** Reads the stored fields of these ids (those that have a signature in scope). */
export type SignatureReader = (ids: string[]) => Promise<StoredDocument[]>;

/** Damaged documents named one by one (in the errors file); past that, counted. */
const MAX_DAMAGED_NAMED = 10_000;

/** Ids per request when signatures are read from the index. */
export const SIGNATURES_PER_READ = 1000;

/** FNV-1a of a band key: equal keys give equal hashes; a rare collision only costs one more verification. */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h;
}

/** The fields under `prefix` that a signature and its facts are read from. */
export function storedFields(prefix: string, sortField: string): string[] {
  return new StoredLayout(prefix).paths('minhash', 'core', 'simhash', 'token_count', 'cluster_id', 'bands', 'params').concat(sortField);
}

/** The stored fields of a signature, before the MinHash is decoded and the band keys hashed. */
export interface SignatureFields {
  minhash: string;
  bands: string[];
  simhash: Hash64;
  /** The core field's words, for `;core=` params (compared with the values: sketch/core-similarity.ts). */
  core?: Uint32Array;
}

/**
 * The values a document is compared by, `width` words: its MinHash values (decoded into the decoder's scratch
 * array when `scratch`, valid until its next call), followed by the core words when it has them.
 */
export function fieldValues(fields: SignatureFields, scratch = false): Uint32Array {
  const values = scratch ? minhashValuesScratch(fields.minhash) : minhashValues(fields.minhash);
  return fields.core ? withCore(values, fields.core) : values;
}

/**
 * The near-dup fields a signature is made of, each checked against `params` (the parameter set dedup
 * compares): a MinHash of the right length (with its core field for `;core=` params), a band key per band, a SimHash of 16 hex digits; or why the
 * document cannot be compared. The shape is checked for every document, never taken from the first one.
 */
export function signatureFields(source: Record<string, unknown>, prefix: string, params: string): SignatureFields | StoredProblem {
  const raw = storedIn(source, new StoredLayout(prefix));
  if (raw instanceof StoredProblem) return raw;
  const problem = checkStored(raw, ['minhash', 'simhash', 'bands', 'token_count'], params);
  if (problem) return problem;
  const core = storedCore(raw);
  return { minhash: raw.minhash as string, bands: raw.bands as string[], simhash: parseSimhash(raw.simhash as string), ...(core ? { core } : {}) };
}

/** A stored signature, or why it cannot be compared. */
export function decodeSignature(source: Record<string, unknown>, prefix: string, params: string): StoredSignature | StoredProblem {
  const fields = signatureFields(source, prefix, params);
  return fields instanceof StoredProblem ? fields : decodeFields(fields);
}

function decodeFields(fields: SignatureFields): StoredSignature {
  return { values: fieldValues(fields), simhash: fields.simhash, bands: Int32Array.from(fields.bands, keyHash) };
}

/**
 * The signatures dedup verifies with, checked and decoded from the stored fields, a bounded cache of those met recently
 * read again from the index when gone; beside them, the facts of every document met and those left out as damaged.
 */
export class SignatureStore {
  readonly facts: FactsTable;
  /** Documents whose stored signature cannot be compared (damaged, or of another shape), and why: left out of every pair. */
  readonly damaged = new Map<string, string>();
  /** Damaged documents past the first MAX_DAMAGED_NAMED, counted but not named. */
  damagedUnnamed = 0;
  private readonly cache: RecentMap<string, StoredSignature>;

  /** `documents`: the numbering the facts are kept by; `keepClusterIds`: whether the facts keep earlier clusters. */
  constructor(
    private readonly read: SignatureReader,
    private readonly prefix: string,
    private readonly sortField: string,
    /** The parameter set compared: every signature must have its shape. */
    private readonly params: string,
    /** Signatures held at once; Infinity when the whole index fits (nothing is ever read twice). */
    capacity: number,
    { documents = new DocNumbers(), keepClusterIds = true, keepTokens = true, expected = 0 }: { documents?: DocIds; keepClusterIds?: boolean; keepTokens?: boolean; expected?: number } = {},
  ) {
    this.cache = new RecentMap(capacity);
    // Ids spilled to disk (an index too large for memory): the facts go with them, into their folder.
    const spill = documents instanceof DocNumbers ? documents.folder : undefined;
    this.facts = new FactsTable(documents, { keepClusterIds, keepTokens, expected, spill });
  }

  /** The signatures of these documents: from the cache, the others read from the index (and cached). */
  async load(ids: readonly string[]): Promise<Map<string, StoredSignature>> {
    const found = new Map<string, StoredSignature>();
    const missing: string[] = [];
    for (const id of ids) {
      const signature = this.cache.get(id);
      if (signature) found.set(id, signature);
      else missing.push(id);
    }
    for await (const [id, signature] of this.readAndAdmit(missing)) {
      this.cache.set(id, signature);
      found.set(id, signature);
    }
    return found;
  }

  /** Reads these documents from the index, a thousand per request, and admits each: their signatures. */
  private async *readAndAdmit(ids: readonly string[]): AsyncGenerator<[string, StoredSignature]> {
    for (let i = 0; i < ids.length; i += SIGNATURES_PER_READ) {
      for (const document of await this.read(ids.slice(i, i + SIGNATURES_PER_READ))) {
        const signature = this.admit(document);
        if (signature) yield [document.id, signature];
      }
    }
  }

  /** A document's signature from its stored fields (not cached), its facts kept; undefined (and noted) when it cannot be compared. */
  admit(document: StoredDocument): StoredSignature | undefined {
    const fields = this.checked(document);
    if (!fields) return undefined;
    this.keepFacts(document);
    return decodeFields(fields);
  }

  /** A document's checked signature fields; undefined, with the reason noted, for a damaged one. */
  checked(document: StoredDocument): SignatureFields | undefined {
    const fields = signatureFields(document.source, this.prefix, this.params);
    if (!(fields instanceof StoredProblem)) return fields;
    if (this.damaged.size < MAX_DAMAGED_NAMED || this.damaged.has(document.id)) this.damaged.set(document.id, fields.reason);
    else this.damagedUnnamed++;
    return undefined;
  }

  get damagedCount(): number {
    return this.damaged.size + this.damagedUnnamed;
  }

  /** Keeps the facts of a document that has a signature (`n`: its number, when the caller has it). */
  keepFacts({ id, location, source }: StoredDocument, n?: number): void {
    const clusterId = valueAt(source, storedPath(this.prefix, 'cluster_id'));
    this.facts.set(n ?? id, {
      location,
      tokens: Number(valueAt(source, storedPath(this.prefix, 'token_count')) ?? 0),
      sortKey: valueAt(source, this.sortField),
      // A cluster id that is not a string (written by hand) is no earlier cluster: the document is decided anew.
      clusterId: typeof clusterId === 'string' ? clusterId : undefined,
    });
  }

  /** Reads the facts of documents met only through replayed pairs (--resume). */
  async loadFacts(ids: Iterable<string>): Promise<void> {
    for await (const _ of this.readAndAdmit([...ids].filter((id) => !this.facts.has(id)))); // the facts are kept; nothing cached
  }
}

/**
 * The signature cache, bounded so that memory does not grow with the index: a Map of at most `capacity`
 * entries that forgets the ones not used for longest. Two generations of half the capacity each; a hit in
 * the older moves the entry to the newer, and a full newer one becomes the older. A hit in the newer
 * generation costs one lookup and no write.
 */
export class RecentMap<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();
  private readonly half: number;
  constructor(capacity: number) {
    this.half = Math.max(1, Math.floor(capacity / 2));
  }
  get size(): number {
    return this.current.size + this.previous.size;
  }
  get(key: K): V | undefined {
    const value = this.current.get(key);
    if (value !== undefined) return value;
    const older = this.previous.get(key);
    if (older !== undefined) {
      this.previous.delete(key);
      this.set(key, older);
    }
    return older;
  }
  set(key: K, value: V): void {
    this.previous.delete(key);
    this.current.set(key, value);
    if (this.current.size >= this.half) {
      this.previous = this.current;
      this.current = new Map();
    }
  }
}
