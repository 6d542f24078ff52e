// The proxy's counters, served at /_near_dup/stats: what happened to the documents it saw, and how much
// time it added to the requests it signed (their time through the proxy minus the time spent waiting for
// the cluster's answer).
const LATENCY_WINDOW = 2048;

/** What happened to the documents the proxy saw, by outcome. */
export interface DocumentCounts {
  /** Given the near-dup fields. */
  signed: number;
  /** Could not be signed and were forwarded without fields (--on-error pass). */
  passed: number;
  /** Could not be signed and were answered as failed items (--on-error reject). */
  rejected: number;
  /** Partial updates of some text fields but not all: their stored signature was removed. */
  cleared: number;
  /** Nothing to sign: deletes, scripted updates, updates that leave the text alone. */
  untouched: number;
  /** Documents for indices outside --index, forwarded as they were. */
  other_indices: number;
}

/** The proxy's counters, served at `/_near_dup/stats`. */
export class ProxyStats {
  readonly documents: DocumentCounts = { signed: 0, passed: 0, rejected: 0, cleared: 0, untouched: 0, other_indices: 0 };
  /**
   * Documents signed (or cleared) and sent on that the cluster did not store: it refused them (a missing
   * privilege, a mapping conflict, a version conflict...). Counted here, not as signed or cleared: the
   * counts above are of what the cluster stored.
   */
  readonly refusedByCluster = { documents: 0 };
  /** unread: writes passed on without being read (a body near-dup cannot read, with --on-error pass); refused: requests answered by the proxy itself (unreadable with --on-error reject, too large). */
  readonly requests = { bulk: 0, document: 0, passed_through: 0, unread: 0, refused: 0, failed: 0 };
  private readonly latencies: number[] = [];
  private latencyCount = 0;
  private latencySum = 0;

  /** A document counted as signed or cleared when it was sent on, that the engine then refused. */
  notStored(kind: 'signed' | 'cleared'): void {
    this.documents[kind]--;
    this.refusedByCluster.documents++;
  }

  addLatency(ms: number): void {
    this.latencyCount++;
    this.latencySum += ms;
    this.latencies.push(ms);
    if (this.latencies.length > LATENCY_WINDOW) this.latencies.shift();
  }

  snapshot(): Record<string, unknown> {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const at = (q: number) => (sorted.length === 0 ? 0 : round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]));
    return {
      documents: { ...this.documents },
      requests: { ...this.requests },
      latency_added_ms: {
        requests: this.latencyCount,
        mean: this.latencyCount === 0 ? 0 : round(this.latencySum / this.latencyCount),
        // over the last requests signed
        p50: at(0.5),
        p99: at(0.99),
      },
      refused_by_cluster: { ...this.refusedByCluster },
    };
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
