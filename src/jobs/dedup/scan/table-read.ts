// Stage 1 of a whole-index pass (the full pass, and each share of a split one): every signature in scope
// read once, in one point-in-time scan (signature-scan.ts), into a table the bucket and verify stages read:
// in memory when the documents are at most --max-cached-signatures, else spilled to local disk
// (signature-table.ts). Input: the scan's settings; output: the table, which also finds signatures by id (to
// cut clusters, or to check pairs read back) and is closed when the pass is done.
import os from 'node:os';
import type { EngineClient } from '../../../engine/client.js';
import type { DocIds } from '../documents/doc-numbers.js';
import { readSignatures } from './signature-scan.js';
import type { SignatureStore, StoredSignature } from '../documents/signature-store.js';
import { SignatureRecords, type SignatureTable } from './signature-table.js';

/** A table the stages read, that also finds signatures by id (by number when given), and lets them go. */
export type ReadTable = SignatureTable & {
  find(ids: readonly string[], numbers?: ArrayLike<number>): Promise<ReadonlyMap<string, StoredSignature>>;
  /** A table on disk: the families' records gathered in one pass for find (false: no room, read where they lie). */
  gatherMembers?(families: Iterable<ArrayLike<number>>): boolean;
  close?(): void;
};

/** Stage 1's settings: what to scan, and whether the table is held in memory or spilled under `spillDir`. */
export interface TableRead {
  index: string;
  prefix: string;
  /** The documents compared: this params value, at least one token. */
  scope: Record<string, unknown>;
  /** The stored fields a signature and its facts come from. */
  storedFields: string[];
  pageSize: number;
  /** Documents in scope. */
  documents: number;
  /** The numbering shared with the store and the verifier. */
  numbers?: DocIds;
  /** Whether every signature is held in memory; else they are spilled to local disk under `spillDir`. */
  everythingCached: boolean;
  spillDir?: string;
  onDocuments?: (done: number, total: number) => void;
}

/** Every signature in scope, read into memory or onto the disk (a spill that fails is removed). */
export async function readTable(client: EngineClient, store: SignatureStore, settings: TableRead): Promise<ReadTable> {
  const { index, prefix, scope, storedFields: fields, pageSize, documents, numbers, onDocuments } = settings;
  const read = { index, prefix, scope, fields, pageSize, documents, onDocuments };
  const spillDir = settings.everythingCached ? undefined : (settings.spillDir ?? os.tmpdir());
  const table = new SignatureRecords(numbers, { expected: documents, spillDir, valueBits: 'auto' });
  try {
    return await readSignatures(client, store, read, table);
  } catch (err) {
    table.close();
    throw err;
  }
}
