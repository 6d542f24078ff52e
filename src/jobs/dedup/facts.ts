// What the clusters need of every document dedup meets (the value the canonical rule sorts by, its token
// count when that rule is the longest, its cluster from an earlier run, where it lives), kept in columns by
// document number: 9 bytes a document for a date or number to sort by (and 2 for its index), instead of an
// object and a string in a map.
import { type DocLocation, LocationTable } from '../../engine/doc-location.js';
import { type DocIds, enlarged } from './doc-numbers.js';

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

export class FactsTable implements FactsLookup {
  /** 1 for a document whose facts were read. */
  private present = new Uint8Array(0);
  /** Token counts, when kept (the --canonical longest rule sorts by them); else every count reads 0. */
  private tokens?: Int32Array;
  /** The sort value when it is a number or a date, else NaN. */
  private sortNumbers = new Float64Array(0);
  /** Sort values that are neither (a keyword, a boolean), by number. */
  private readonly sortOthers = new Map<number, unknown>();
  private readonly clusterIds = new Map<number, string>();
  private readonly locations: LocationTable;
  private readonly keepClusterIds: boolean;

  /**
   * `keepClusterIds`: whether the earlier clusters are kept (an incremental run needs them; a full one does
   * not); `keepTokens`: whether token counts are kept (4 bytes a document; only the longest rule needs them,
   * and it sorts by the token count as its sort value too); `expected`: documents to make room for at once
   * (the columns grow past it as needed).
   */
  constructor(
    private readonly documents: DocIds,
    { keepClusterIds = true, keepTokens = true, expected = 0 }: { keepClusterIds?: boolean; keepTokens?: boolean; expected?: number } = {},
  ) {
    this.keepClusterIds = keepClusterIds;
    this.locations = new LocationTable(expected);
    this.present = new Uint8Array(expected);
    this.sortNumbers = new Float64Array(expected).fill(Number.NaN);
    if (keepTokens) this.tokens = new Int32Array(expected);
  }

  has(id: string): boolean {
    const n = this.documents.find(id);
    return n !== undefined && n < this.present.length && this.present[n] === 1;
  }

  /** The facts of a document, by id or by its number. */
  set(document: string | number, facts: Facts): void {
    const n = typeof document === 'number' ? document : this.documents.numberOf(document);
    this.grow(n);
    this.present[n] = 1;
    if (this.tokens) this.tokens[n] = facts.tokens;
    const sortNumber = asNumber(facts.sortKey);
    this.sortNumbers[n] = sortNumber;
    if (Number.isNaN(sortNumber) && facts.sortKey !== undefined && facts.sortKey !== null) this.sortOthers.set(n, facts.sortKey);
    else this.sortOthers.delete(n);
    if (this.keepClusterIds && facts.clusterId) this.clusterIds.set(n, facts.clusterId);
    else this.clusterIds.delete(n);
    if (facts.location) this.locations.set(n, facts.location);
  }

  get(id: string): Facts | undefined {
    const n = this.documents.find(id);
    return n === undefined ? undefined : this.at(n);
  }

  /** The facts of document number n. */
  at(n: number): Facts | undefined {
    if (n >= this.present.length || this.present[n] !== 1) return undefined;
    const sortNumber = this.sortNumbers[n];
    return {
      tokens: this.tokens ? this.tokens[n] : 0,
      sortKey: Number.isNaN(sortNumber) ? this.sortOthers.get(n) : sortNumber,
      clusterId: this.clusterIds.get(n),
      location: this.locations.get(n),
    };
  }

  /** Columns with room for document n. */
  private grow(n: number): void {
    if (n < this.present.length) return;
    const length = Math.max(1024, Math.ceil((n + 1) * 1.5));
    const present = new Uint8Array(length);
    present.set(this.present);
    this.present = present;
    this.sortNumbers = enlarged(this.sortNumbers, length, Number.NaN);
    if (this.tokens) this.tokens = enlarged(this.tokens, length);
  }
}

/** A number as it is, a string that reads as a date as its milliseconds, anything else NaN. */
function asNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Date.parse(value);
  return Number.NaN;
}
