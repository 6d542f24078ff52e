// Stage 1 of a whole-index pass (the full pass, and each share of a split one): every signature in scope
// read once, in one point-in-time scan, each checked by the store and decoded straight into a table the
// bucket and verify stages read: in memory when the documents are at most --max-cached-signatures, else
// spilled to local disk (signature-table.ts). The store keeps each document's facts by the number the table
// gives it; the next page is asked for while this one is decoded. The table also finds signatures by id
// (to cut clusters, or to check pairs read back) and is closed when the pass is done.
import os from 'node:os';
import type { EngineClient } from '../../../engine/client.js';
import { locationOf } from '../../../engine/doc-location.js';
import { readAhead, scanIndex } from '../../../engine/scan.js';
import type { DocIds } from '../documents/doc-numbers.js';
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

/**
 * Documents per page of the scan, at most: a page is parsed whole before its signatures are copied out, and
 * a million documents read 5,000 a page left the process 150 MB larger (its heap grown for pages that died
 * old) for no gain in time.
 */
const SCAN_PAGE = 1000;

/** Every signature in scope, read into memory or onto the disk (a spill that fails is removed). */
export async function readTable(client: EngineClient, store: SignatureStore, settings: TableRead): Promise<ReadTable> {
  const spillDir = settings.everythingCached ? undefined : (settings.spillDir ?? os.tmpdir());
  const table = new SignatureRecords(settings.numbers, { expected: settings.documents, spillDir, valueBits: 'auto' });
  try {
    await scanInto(client, store, settings, table);
    return table;
  } catch (err) {
    table.close();
    throw err;
  }
}

async function scanInto(client: EngineClient, store: SignatureStore, read: TableRead, table: SignatureRecords): Promise<void> {
  // A scroll that loses a page starts again, skipping what the table holds (known by the numbering, not by a
  // second set of every id; a document left out as damaged is read again and left out again).
  const seen = { has: (id: string) => table.holds(id), add: () => undefined };
  const pages = scanIndex(client, { index: read.index, query: read.scope, sourceIncludes: read.storedFields, pageSize: Math.min(read.pageSize, SCAN_PAGE), pointInTime: client.pointInTime, seen });
  for await (const page of readAhead(pages)) {
    for (const hit of page) {
      const document = { id: hit._id, location: locationOf(hit), source: hit._source ?? {} };
      const fields = store.checked(document);
      if (!fields) continue;
      // Numbered by the table as it is added, its facts kept by that number (no lookup of the id).
      const n = table.addFields(document.id, fields);
      if (n >= 0) store.keepFacts(document, n);
    }
    read.onDocuments?.(table.size, read.documents);
  }
}
