// The per-document columns of dedup's facts (facts.ts), by document number: the number the canonical rule
// sorts by, the token count, where the document lives (its index among the names met, + 1). In memory as
// typed arrays (11 bytes a document, 15 with token counts), or on local disk beside the spilled ids when the
// index is too large for memory (16 bytes a document there, none in memory): written in the order the scan
// numbers the documents, read back one small block at a time by the clusters' cut and the write-back.
import { enlarged } from './doc-numbers.js';
import { readAll, type SpillFolder, writeAll } from '../spill/spill-folder.js';

export interface FactRow {
  /** The sort value when it is a number or a date, else NaN. */
  sortNumber: number;
  tokens: number;
  /** Where it lives: its index's place among the names + 1 (0: not known). */
  place: number;
}

export interface FactColumns {
  set(n: number, row: FactRow): void;
  /** Document n's row, or undefined when none was set. */
  get(n: number): FactRow | undefined;
}

/** The columns in memory, grown as documents are numbered past them. */
export class MemoryFactColumns implements FactColumns {
  /** 1 for a document whose facts were read. */
  private present: Uint8Array;
  private sortNumbers: Float64Array;
  /** Token counts, when kept (the --canonical longest rule sorts by them); else every count reads 0. */
  private tokens?: Int32Array;
  /** 2 bytes a document while there are fewer than 65,535 places. */
  private places: Uint16Array | Int32Array;

  constructor(expected: number, keepTokens: boolean) {
    this.present = new Uint8Array(expected);
    this.sortNumbers = new Float64Array(expected).fill(Number.NaN);
    if (keepTokens) this.tokens = new Int32Array(expected);
    this.places = new Uint16Array(expected);
  }

  set(n: number, row: FactRow): void {
    this.grow(n, row.place);
    this.present[n] = 1;
    this.sortNumbers[n] = row.sortNumber;
    if (this.tokens) this.tokens[n] = row.tokens;
    this.places[n] = row.place;
  }

  get(n: number): FactRow | undefined {
    if (n >= this.present.length || this.present[n] !== 1) return undefined;
    return { sortNumber: this.sortNumbers[n], tokens: this.tokens ? this.tokens[n] : 0, place: this.places[n] };
  }

  /** Room for document n, and for a place past 2 bytes. */
  private grow(n: number, place: number): void {
    if (place > 0xffff && this.places instanceof Uint16Array) this.places = Int32Array.from(this.places);
    if (n < this.present.length) return;
    const length = Math.max(1024, Math.ceil((n + 1) * 1.5));
    this.present = enlarged(this.present, length);
    this.sortNumbers = enlarged(this.sortNumbers, length, Number.NaN);
    if (this.tokens) this.tokens = enlarged(this.tokens, length);
    this.places = enlarged(this.places, length);
  }
}

/** Bytes of a document's row on disk: sort number (8), tokens (4), place (4, with 0: none set). */
const ROW_BYTES = 16;
/** Rows written at once. */
const WRITE_ROWS = 1 << 16;
/** Rows read at once (one 4 KB block). */
const BLOCK_ROWS = 256;

/**
 * The columns in a file of the spill folder, row n at n * 16 bytes: rows set in ascending order (the scan's)
 * gather in a buffer written a block at a time; any other row is written where it goes. A row never set
 * reads as zeros: its place 0, so not set.
 */
export class FileFactColumns implements FactColumns {
  private readonly file: number;
  private readonly pending = new DataView(new ArrayBuffer(WRITE_ROWS * ROW_BYTES));
  /** The first row in `pending`, and how many follow it there. */
  private pendingFirst = 0;
  private pendingRows = 0;
  /** Rows in the file (past its end they read as never set). */
  private rows = 0;
  private readonly block = { first: -1, count: 0, view: new DataView(new ArrayBuffer(BLOCK_ROWS * ROW_BYTES)) };

  constructor(folder: SpillFolder) {
    this.file = folder.create('facts.bin');
  }

  set(n: number, row: FactRow): void {
    if (n !== this.pendingFirst + this.pendingRows || this.pendingRows === WRITE_ROWS) {
      this.flush();
      this.pendingFirst = n;
    }
    writeRow(this.pending, this.pendingRows++, { ...row, place: row.place + 1 });
    if (n >= this.block.first && n < this.block.first + this.block.count) Object.assign(this.block, { first: -1, count: 0 }); // (read again)
  }

  get(n: number): FactRow | undefined {
    this.flush();
    if (n >= this.rows) return undefined;
    if (n < this.block.first || n >= this.block.first + this.block.count) this.readBlock(n);
    const row = readRow(this.block.view, n - this.block.first);
    return row.place === 0 ? undefined : { ...row, place: row.place - 1 };
  }

  private flush(): void {
    if (this.pendingRows === 0) return;
    const bytes = new Uint8Array(this.pending.buffer, 0, this.pendingRows * ROW_BYTES);
    writeAll(this.file, bytes, this.pendingFirst * ROW_BYTES);
    this.rows = Math.max(this.rows, this.pendingFirst + this.pendingRows);
    this.pendingRows = 0;
  }

  private readBlock(n: number): void {
    const first = n - (n % BLOCK_ROWS);
    const count = Math.min(BLOCK_ROWS, this.rows - first);
    readAll(this.file, new Uint8Array(this.block.view.buffer, 0, count * ROW_BYTES), first * ROW_BYTES);
    Object.assign(this.block, { first, count });
  }
}

function writeRow(view: DataView, i: number, row: FactRow): void {
  view.setFloat64(i * ROW_BYTES, row.sortNumber, true);
  view.setInt32(i * ROW_BYTES + 8, row.tokens, true);
  view.setUint32(i * ROW_BYTES + 12, row.place, true);
}

function readRow(view: DataView, i: number): FactRow {
  return { sortNumber: view.getFloat64(i * ROW_BYTES, true), tokens: view.getInt32(i * ROW_BYTES + 8, true), place: view.getUint32(i * ROW_BYTES + 12, true) };
}
