// What the clusters need of every document dedup meets (its token count, the value the canonical rule
// sorts by, its cluster from an earlier run), kept in columns by document number: 12 bytes a document for
// a date or number to sort by, instead of an object and a string in a map.
import { type DocLocation, LocationTable } from '../../engine/doc-location.js';
import { type DocIds, withRoomFor } from './doc-numbers.js';

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
  /** -1 for a document whose facts were never read. */
  private tokens = new Int32Array(0);
  /** The sort value when it is a number or a date, else NaN. */
  private sortNumbers = new Float64Array(0);
  /** Sort values that are neither (a keyword, a boolean), by number. */
  private readonly sortOthers = new Map<number, unknown>();
  private readonly clusterIds = new Map<number, string>();
  private readonly locations = new LocationTable();

  /**
   * `keepClusterIds`: whether the earlier clusters are kept (an incremental run needs them; a full one does
   * not); `expected`: documents to make room for at once (the columns grow past it as needed).
   */
  constructor(
    private readonly documents: DocIds,
    private readonly keepClusterIds = true,
    expected = 0,
  ) {
    this.tokens = new Int32Array(expected).fill(-1);
    this.sortNumbers = new Float64Array(expected).fill(Number.NaN);
  }

  has(id: string): boolean {
    const n = this.documents.find(id);
    return n !== undefined && n < this.tokens.length && this.tokens[n] >= 0;
  }

  /** The facts of a document, by id or by its number. */
  set(document: string | number, facts: Facts): void {
    const n = typeof document === 'number' ? document : this.documents.numberOf(document);
    this.tokens = withRoomFor(this.tokens, n, -1);
    this.sortNumbers = withRoomFor(this.sortNumbers, n, Number.NaN);
    this.tokens[n] = facts.tokens;
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
    if (n >= this.tokens.length || this.tokens[n] < 0) return undefined;
    const sortNumber = this.sortNumbers[n];
    return {
      tokens: this.tokens[n],
      sortKey: Number.isNaN(sortNumber) ? this.sortOthers.get(n) : sortNumber,
      clusterId: this.clusterIds.get(n),
      location: this.locations.get(n),
    };
  }
}

/** A number as it is, a string that reads as a date as its milliseconds, anything else NaN. */
function asNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Date.parse(value);
  return Number.NaN;
}
