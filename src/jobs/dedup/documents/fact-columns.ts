// The per-document rows of dedup's facts (facts.ts), by document number: the number the canonical rule
// sorts by, where the document lives (its index among the names met, + 1), and the token count when kept.
// Row n is at n * 12 bytes (16 with token counts) of a record file (spill/record-file.ts): in memory, or
// on local disk beside the spilled ids when the index is too large for memory: written in the order the
// scan numbers the documents, read back a row at a time from memory, a small block at a time from disk.
import { recordFile, type RecordFile } from '../spill/record-file.js';
import type { SpillFolder } from '../spill/spill-folder.js';

/** One document's row of facts as it is stored: its sort number, token count and where it lives. */
export interface FactRow {
  /** The sort value when it is a number or a date, else NaN. */
  sortNumber: number;
  tokens: number;
  /** Where it lives: its index's place among the names + 1 (0: not known). */
  place: number;
}

/** Rows read at once from disk (a 4 KB block at most). */
const BLOCK_ROWS = 256;

/** The rows: a row never set reads as zeros (its place + 1 is 0: not set); a row past the file's end is not set either. */
export class FactColumns {
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
