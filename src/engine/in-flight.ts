// How many write requests to keep in flight while a job runs: the plan's number (in-flight-plan.ts, chosen
// from the cluster's shape), then following the answers, as TCP's congestion window does: halved when the
// engine says it is busy (429: a full write queue), one less when requests take over twice as long per byte
// as the best seen so far (queues are growing), one more after a limit's worth of answers without either,
// never above the chosen limit. A plan given by `--concurrency` stays fixed.
import type { InFlightPlan } from './in-flight-plan.js';

/** Latency per byte this many times the best seen: the engine's queues are growing. */
const SLOW = 2;
/** Weight of a new answer in the running latency per byte. */
const EWMA = 0.3;
/** Answers to requests smaller than this share of the largest seen are not judged: their fixed cost dominates. */
const COMPARABLE = 0.25;

/** The live limit: starts at the plan's, moves with the answers when the plan is adaptive. */
export class InFlightLimit {
  private value: number;
  private ewma = 0;
  private best = Number.POSITIVE_INFINITY;
  private calm = 0;
  private largest = 0;
  /** Times the limit went down, for the job's report. */
  decreases = 0;
  /** Lowest the limit went. */
  lowest: number;

  constructor(
    readonly plan: InFlightPlan,
    private readonly onChange: (limit: number) => void = () => {},
  ) {
    this.value = plan.limit;
    this.lowest = plan.limit;
  }

  get current(): number {
    return this.value;
  }

  /** An answer that took `ms` for `bytes` sent. */
  answered(ms: number, bytes: number): void {
    if (!this.plan.adaptive) return;
    this.largest = Math.max(this.largest, bytes);
    // A small request costs more per byte (its fixed part): only requests of comparable size are compared.
    if (bytes < COMPARABLE * this.largest) {
      if (++this.calm >= this.value && this.value < this.plan.limit) this.set(this.value + 1);
      return;
    }
    const perByte = ms / Math.max(1, bytes);
    this.ewma = this.ewma === 0 ? perByte : EWMA * perByte + (1 - EWMA) * this.ewma;
    this.best = Math.min(this.best, this.ewma);
    if (this.ewma > SLOW * this.best) this.lower(this.value - 1);
    else if (++this.calm >= this.value && this.value < this.plan.limit) this.set(this.value + 1);
  }

  /** The engine said it is busy (429). */
  busy(): void {
    if (this.plan.adaptive) this.lower(Math.floor(this.value / 2));
  }

  private lower(to: number): void {
    const next = Math.max(1, to);
    if (next >= this.value) return;
    this.decreases++;
    this.lowest = Math.min(this.lowest, next);
    this.set(next);
    // Latency settles at the lower level before it is judged again.
    this.best = Number.POSITIVE_INFINITY;
    this.ewma = 0;
  }

  private set(next: number): void {
    this.calm = 0;
    this.value = next;
    this.onChange(next);
  }

  /** For the job's report: "4 (3 data nodes with 6 write threads, 3 primary shards; lowered 2 times, to 2)". */
  describe(): string {
    const moved = this.decreases > 0 ? `; lowered ${this.decreases} time${this.decreases === 1 ? '' : 's'}, to ${this.lowest} at the least, ${this.value} at the end` : '';
    return `${this.plan.limit} (${this.plan.why}${moved})`;
  }
}
