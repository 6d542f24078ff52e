// The signatures dedup verifies with: decoded from the stored fields, kept in a bounded cache (the
// documents met recently), and read from the index a thousand at a time when the cache no longer has
// them. Beside them, the few facts about every document met that the clusters need.
import { valueAt } from '../../annotation.js';
import type { DocLocation } from '../../engine/doc-location.js';
import { minhashValues } from '../../sketch/lean-minhash.js';
import { type Hash64, parseSimhashHex } from '../../sketch/simhash.js';
import { DocNumbers } from './doc-numbers.js';
import { FactsTable } from './facts.js';
import { RecentMap } from './recent-map.js';

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
  return ['minhash', 'simhash', 'token_count', 'cluster_id', 'bands'].map((name) => `${prefix}.${name}`).concat(sortField);
}

/** The stored fields of a signature, before the MinHash is decoded and the band keys hashed. */
export interface SignatureFields {
  minhash: string;
  bands: string[];
  simhash: Hash64;
}

/**
 * The near-dup fields a signature is made of (bands defaulted); undefined without a MinHash. A stored
 * SimHash that is not 16 hex digits (written by hand) counts as 0: it only feeds the distance reported
 * beside a pair, and one such document must not stop a job.
 */
export function signatureFields(source: Record<string, unknown>, prefix: string): SignatureFields | undefined {
  const minhash = valueAt(source, `${prefix}.minhash`);
  if (typeof minhash !== 'string') return undefined;
  return {
    minhash,
    bands: (valueAt(source, `${prefix}.bands`) as string[] | undefined) ?? [],
    simhash: storedSimhash(valueAt(source, `${prefix}.simhash`)),
  };
}

function storedSimhash(value: unknown): Hash64 {
  try {
    return parseSimhashHex(String(value ?? '0000000000000000'));
  } catch {
    return { hi: 0, lo: 0 };
  }
}

/** A stored signature, or undefined for a document without a MinHash. */
export function decodeSignature(source: Record<string, unknown>, prefix: string): StoredSignature | undefined {
  const fields = signatureFields(source, prefix);
  return fields && decodeFields(fields);
}

function decodeFields(fields: SignatureFields): StoredSignature {
  return { values: minhashValues(fields.minhash), simhash: fields.simhash, bands: Int32Array.from(fields.bands, keyHash) };
}

export class SignatureStore {
  readonly facts: FactsTable;
  private readonly cache: RecentMap<string, StoredSignature>;

  /** `documents`: the numbering the facts are kept by; `keepClusterIds`: whether the facts keep earlier clusters. */
  constructor(
    private readonly read: SignatureReader,
    private readonly prefix: string,
    private readonly sortField: string,
    /** Signatures held at once; Infinity when the whole index fits (nothing is ever read twice). */
    capacity: number,
    { documents = new DocNumbers(), keepClusterIds = true }: { documents?: DocNumbers; keepClusterIds?: boolean } = {},
  ) {
    this.cache = new RecentMap(capacity);
    this.facts = new FactsTable(documents, keepClusterIds);
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

  /** A document's signature from its stored fields (not cached), its facts kept; undefined without a MinHash. */
  admit(document: StoredDocument): StoredSignature | undefined {
    const fields = signatureFields(document.source, this.prefix);
    if (!fields) return undefined;
    this.keepFacts(document);
    return decodeFields(fields);
  }

  /** Keeps the facts of a document that has a signature. */
  keepFacts({ id, location, source }: StoredDocument): void {
    this.facts.set(id, {
      location,
      tokens: Number(valueAt(source, `${this.prefix}.token_count`) ?? 0),
      sortKey: valueAt(source, this.sortField),
      clusterId: (valueAt(source, `${this.prefix}.cluster_id`) as string | null | undefined) ?? undefined,
    });
  }

  /** Reads the facts of documents met only through replayed pairs (--resume). */
  async loadFacts(ids: Iterable<string>): Promise<void> {
    for await (const _ of this.readAndAdmit([...ids].filter((id) => !this.facts.has(id)))); // the facts are kept; nothing cached
  }
}
