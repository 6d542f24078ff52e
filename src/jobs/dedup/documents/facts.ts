// What the clusters need of every document dedup meets (the value the canonical rule sorts by, its token
// count when that rule is the longest, its cluster from an earlier run, where it lives). The common ones
// go in rows by document number (12 bytes: a number or date to sort by and the place of the index the
// document lives in, 16 with token counts) of a record file, in memory or on disk beside the spilled ids;
// index names are interned (a data stream or an alias has a handful); routings, cluster ids and sort values
// that are not numbers (keywords) are kept only for the documents that have them.
import type { DocLocation } from '../../../engine/doc-location.js';
import type { DocIds } from './doc-numbers.js';
import { recordFile, type RecordFile } from '../spill/record-file.js';
import type { SpillFolder } from '../spill/spill-folder.js';

/**
 * What the clusters need of one document: its token count and sort value (for the canonical rule), its earlier cluster,
 * where it lives.
 */
export interface Facts {
  tokens: number;
  /** The value the canonical rule sorts by: a date as its milliseconds, a number as it is, else as stored. */
  sortKey: unknown;
  /** Its cluster from an earlier run. */
  clusterId?: string;
  /** Where it lives (its concrete index and routing), for the write-back. */
  location?: DocLocation;
}

/** The facts of a document by id (a FactsTable, or a map in tests), and by number when the lookup has a numbering. */
export interface FactsLookup {
  get(id: string): Facts | undefined;
  at?(n: number): Facts | undefined;
}

/**
 * The facts of every document met, by number: the common ones in rows (FactColumns), the rare ones (keyword sort
 * values, routings, earlier clusters) in maps of the documents that have them.
 */
export class FactsTable implements FactsLookup {
  private readonly columns: FactColumns;
  /** Sort values that are neither a number nor a date (a keyword, a boolean), by number. */
  private readonly sortOthers = new Map<number, unknown>();
  private readonly clusterIds = new Map<number, string>();
  private readonly routings = new Map<number, string>();
  /** The index names met, in order (a document's place is its index's position + 1). */
  private readonly names: string[] = [];
  private readonly places = new Map<string, number>();
  private readonly keepClusterIds: boolean;

  /**
   * `keepClusterIds`: whether the earlier clusters are kept (an incremental run needs them; a full one does
   * not); `keepTokens`: whether token counts are kept (4 bytes a document; only the longest rule needs them,
   * and it sorts by the token count as its sort value too); `expected`: documents to make room for at once
   * (the columns grow past it as needed); `spill`: a folder to keep the columns in, on disk, instead.
   */
  constructor(
    private readonly documents: DocIds,
    { keepClusterIds = true, keepTokens = true, expected = 0, spill }: { keepClusterIds?: boolean; keepTokens?: boolean; expected?: number; spill?: SpillFolder } = {},
  ) {
    this.keepClusterIds = keepClusterIds;
    this.columns = new FactColumns(expected, keepTokens, spill);
  }

  has(id: string): boolean {
    const n = this.documents.find(id);
    return n !== undefined && this.columns.get(n) !== undefined;
  }

  /** The facts of a document, by id or by its number. */
  set(document: string | number, facts: Facts): void {
    const n = typeof document === 'number' ? document : this.documents.numberOf(document);
    const sortNumber = asNumber(facts.sortKey);
    this.columns.set(n, { sortNumber, tokens: facts.tokens, place: facts.location ? this.placeOf(facts.location.index) : 0 });
    keep(this.sortOthers, n, Number.isNaN(sortNumber) && facts.sortKey !== null ? facts.sortKey : undefined);
    keep(this.clusterIds, n, this.keepClusterIds ? facts.clusterId || undefined : undefined);
    keep(this.routings, n, facts.location?.routing);
  }

  get(id: string): Facts | undefined {
    const n = this.documents.find(id);
    return n === undefined ? undefined : this.at(n);
  }

  /** The facts of document number n. */
  at(n: number): Facts | undefined {
    const row = this.columns.get(n);
    if (!row) return undefined;
    return {
      tokens: row.tokens,
      sortKey: Number.isNaN(row.sortNumber) ? this.sortOthers.get(n) : row.sortNumber,
      clusterId: this.clusterIds.get(n),
      location: this.locationAt(n, row.place),
    };
  }

  /** An index name's place (+ 1), given one the first time it is met. */
  private placeOf(index: string): number {
    let place = this.places.get(index);
    if (place === undefined) {
      this.names.push(index);
      this.places.set(index, (place = this.names.length));
    }
    return place;
  }

  private locationAt(n: number, place: number): DocLocation | undefined {
    if (place === 0) return undefined;
    const routing = this.routings.get(n);
    const index = this.names[place - 1];
    return routing === undefined ? { index } : { index, routing };
  }
}

/** Keeps a value for n when there is one, else forgets n's. */
function keep<T>(map: Map<number, T>, n: number, value: T | undefined): void {
  if (value === undefined) map.delete(n);
  else map.set(n, value);
}

/** A number as it is, a string that reads as a date as its milliseconds, anything else NaN. */
function asNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Date.parse(value);
  return Number.NaN;
}

/** One document's row of facts as it is stored: its sort number, token count and where it lives. */
interface FactRow {
  /** The sort value when it is a number or a date, else NaN. */
  sortNumber: number;
  tokens: number;
  /** Where it lives: its index's place among the names + 1 (0: not known). */
  place: number;
}

/** Rows read at once from disk (a 4 KB block at most). */
const BLOCK_ROWS = 256;

/** The rows: a row never set reads as zeros (its place + 1 is 0: not set); a row past the file's end is not set either. */
class FactColumns {
  private readonly file: RecordFile;
  private readonly rowBytes: number;
  /** A row on its way to the file, as numbers and as bytes. */
  private readonly row: DataView;
  private readonly rowBytesView: Uint8Array;
  /** Rows read at once (a block from disk, one from memory), and the last read. */
  private readonly blockRows: number;
  private readonly block: { first: number; count: number; view: DataView };

  /** `expected`: documents to make room for at once in memory; `keepTokens`: whether token counts are kept (else they read 0); `spill`: keep the rows there. */
  constructor(expected: number, keepTokens: boolean, spill?: SpillFolder) {
    this.rowBytes = keepTokens ? 16 : 12;
    this.file = recordFile('facts.bin', spill, (1 << 16) * this.rowBytes, Math.max(1, expected) * this.rowBytes);
    this.row = new DataView(new ArrayBuffer(this.rowBytes));
    this.rowBytesView = new Uint8Array(this.row.buffer);
    this.blockRows = spill ? BLOCK_ROWS : 1;
    this.block = { first: -1, count: 0, view: new DataView(new ArrayBuffer(this.blockRows * this.rowBytes)) };
  }

  set(n: number, row: FactRow): void {
    const view = this.row;
    view.setFloat64(0, row.sortNumber, true);
    view.setUint32(8, row.place + 1, true);
    if (this.rowBytes === 16) view.setInt32(12, row.tokens, true);
    if (n * this.rowBytes === this.file.length) this.file.append(this.rowBytesView);
    else this.file.write(n * this.rowBytes, this.rowBytesView);
    if (n >= this.block.first && n < this.block.first + this.block.count) this.block.first = -1; // (read again)
  }

  /** Document n's row, or undefined when none was set. */
  get(n: number): FactRow | undefined {
    const rows = this.file.length / this.rowBytes;
    if (n >= rows) return undefined;
    const block = this.block;
    if (block.first < 0 || n < block.first || n >= block.first + block.count) {
      block.first = n - (n % this.blockRows);
      block.count = Math.min(this.blockRows, rows - block.first);
      this.file.read(block.first * this.rowBytes, new Uint8Array(block.view.buffer, 0, block.count * this.rowBytes));
    }
    const at = (n - block.first) * this.rowBytes;
    const place = block.view.getUint32(at + 8, true);
    if (place === 0) return undefined;
    return { sortNumber: block.view.getFloat64(at, true), tokens: this.rowBytes === 16 ? block.view.getInt32(at + 12, true) : 0, place: place - 1 };
  }
}
