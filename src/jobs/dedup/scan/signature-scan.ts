// Stage 1 of the full pass: every signature in scope read once, in one point-in-time scan, each checked and
// decoded straight into a table (a pool in memory, or a spill on local disk), each document's facts kept by
// the store. The next page is asked for while this one is decoded.
import type { EngineClient } from '../../../engine/client.js';
import { locationOf } from '../../../engine/doc-location.js';
import { readAhead, scanIndex } from '../../../engine/scan.js';
import type { SignatureFields, SignatureStore } from '../documents/signature-store.js';

/** What stage 1 reads: the index, the scope and fields, its page size, and where to report progress. */
export interface SignatureScan {
  index: string;
  scope: Record<string, unknown>;
  /** The stored fields a signature and its facts come from. */
  fields: string[];
  /** Where near-dup's fields are. */
  prefix: string;
  pageSize: number;
  /** Documents in scope. */
  documents: number;
  onDocuments?: (done: number, total: number) => void;
}

/** Where the scan puts each signature. */
export interface SignatureSink {
  readonly size: number;
  /** Adds a document: its number in the numbering the store keeps facts by (-1: left out). */
  addFields(id: string, fields: SignatureFields): number;
  /** Whether a document was added (what a restarted scroll skips by), when the sink can tell. */
  holds?(id: string): boolean;
}

/**
 * Documents per page of the signature read, at most: a page is parsed whole before its signatures are
 * copied out, and a million documents read 5,000 a page left the process 150 MB larger (its heap grown for
 * pages that died old) for no gain in time.
 */
const SCAN_PAGE = 1000;

/**
 * Every signature in scope read into the sink in one point-in-time scan, each checked by the store, which keeps its
 * facts by the number the sink gives it; a scroll that starts again skips what the sink holds.
 */
export async function readSignatures<T extends SignatureSink>(client: EngineClient, store: SignatureStore, read: SignatureScan, sink: T): Promise<T> {
  // A scroll that loses a page starts again, skipping what was read: known by the sink, not by a second set of
  // every id (a document it left out, damaged, is read again and left out again).
  const seen = sink.holds ? { has: (id: string) => sink.holds?.(id) === true, add: () => undefined } : undefined;
  const pages = scanIndex(client, { index: read.index, query: read.scope, sourceIncludes: read.fields, pageSize: Math.min(read.pageSize, SCAN_PAGE), pointInTime: client.pointInTime, seen });
  for await (const page of readAhead(pages)) {
    for (const hit of page) {
      const document = { id: hit._id, location: locationOf(hit), source: hit._source ?? {} };
      const fields = store.checked(document);
      if (!fields) continue;
      // Numbered by the sink as it is added, its facts kept by that number (no lookup of the id).
      const n = sink.addFields(document.id, fields);
      if (n >= 0) store.keepFacts(document, n);
    }
    read.onDocuments?.(sink.size, read.documents);
  }
  return sink;
}
