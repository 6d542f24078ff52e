// The room for large documents the proxy holds at once (--max-buffered-mb). A document is held whole to be
// signed, and signing costs a few times its size in memory (its text decoded, parsed, written anew), so
// four 95 MB documents at once grew the proxy by 2.2 GB: each request now takes room for what it holds
// before holding it, and gives it back when done.
//
// A request takes room through its lease. Its first room (it holds nothing yet) is waited for in order of
// arrival; more room for a lease that already holds some is served first, since finishing it frees room.
// When every lease that holds room waits for more, none can finish: the newest of those waits is refused
// (429, try again), which frees its room for the others. A request that alone needs more than the whole
// room is refused at once (413, naming the setting).
import { PROXY_ERROR, ProxyRefusal } from './refusal.js';

/** One request's share of the room for large documents: what it holds, more asked for, all given back. */
export interface Lease {
  /** Bytes held now. */
  readonly held: number;
  /** More room: waits for it (in order, or first when this lease holds some); fails with a BudgetError. */
  take(bytes: number): Promise<void>;
  /** Gives back room (at most what is held). */
  give(bytes: number): void;
  /** Gives everything back; a take still waiting fails. */
  close(): void;
}

interface LeaseState {
  held: number;
  closed: boolean;
}

interface Waiting {
  lease: LeaseState;
  bytes: number;
  resolve(): void;
  reject(err: Error): void;
}

/** A request the room cannot take: 413 (alone larger than it all) or 429 (it is held by others waiting too). */
export class BudgetError extends ProxyRefusal {}

/**
 * The room for large documents the proxy holds at once (`--max-buffered-mb`), shared by leases (the file header says
 * how).
 */
export class ByteBudget {
  private free: number;
  /** The most held at once, for the counters. */
  peak = 0;
  /** Leases holding room. */
  private holding = 0;
  /** Leases that hold nothing yet, in order of arrival. */
  private readonly first: Waiting[] = [];
  /** Leases that hold room and wait for more. */
  private readonly more: Waiting[] = [];

  constructor(readonly total: number) {
    this.free = total;
  }

  get held(): number {
    return this.total - this.free;
  }

  get waiting(): number {
    return this.first.length + this.more.length;
  }

  lease(): Lease {
    const state: LeaseState = { held: 0, closed: false };
    return {
      get held() {
        return state.held;
      },
      take: (bytes) => this.take(state, bytes),
      give: (bytes) => this.give(state, bytes),
      close: () => this.close(state),
    };
  }

  private take(lease: LeaseState, bytes: number): Promise<void> {
    if (bytes <= 0) return Promise.resolve();
    if (lease.closed) return Promise.reject(new Error('the request is over'));
    if (lease.held + bytes > this.total) {
      return Promise.reject(
        new BudgetError(
          413,
          PROXY_ERROR,
          `near-dup proxy: this request holds a document or bulk line of ${lease.held + bytes} bytes or more, and ${mb(this.total)} is the room for all the large documents held at once (--max-buffered-mb); send smaller documents, or raise --max-buffered-mb`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      (lease.held === 0 ? this.first : this.more).push({ lease, bytes, resolve, reject });
      this.settle();
    });
  }

  private give(lease: LeaseState, bytes: number): void {
    const given = Math.min(Math.max(0, bytes), lease.held);
    if (given === 0) return;
    lease.held -= given;
    this.free += given;
    if (lease.held === 0) this.holding--;
    this.settle();
  }

  private close(lease: LeaseState): void {
    lease.closed = true;
    for (const queue of [this.first, this.more]) {
      for (let i = queue.length - 1; i >= 0; i--) {
        if (queue[i].lease !== lease) continue;
        queue.splice(i, 1)[0].reject(new Error('the request is over'));
      }
    }
    this.give(lease, lease.held);
  }

  /** Grants what fits (more room first, then first room in order), then breaks a standstill. */
  private settle(): void {
    for (let i = 0; i < this.more.length; ) {
      if (this.more[i].bytes <= this.free) this.grant(this.more.splice(i, 1)[0]);
      else i++;
    }
    while (this.more.length === 0 && this.first.length > 0 && this.first[0].bytes <= this.free) this.grant(this.first.shift() as Waiting);
    if (this.more.length > 0 && this.more.length >= this.holding) {
      (this.more.pop() as Waiting).reject(
        new BudgetError(
          429,
          PROXY_ERROR,
          `near-dup proxy: no room now for this request's large documents: the ${mb(this.total)} of --max-buffered-mb are held by requests that all wait for more; try again, or raise --max-buffered-mb`,
          1,
        ),
      );
    }
  }

  private grant(waiting: Waiting): void {
    this.free -= waiting.bytes;
    if (waiting.lease.held === 0) this.holding++;
    waiting.lease.held += waiting.bytes;
    this.peak = Math.max(this.peak, this.held);
    waiting.resolve();
  }
}

function mb(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
}
