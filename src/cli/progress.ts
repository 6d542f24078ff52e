// Progress of long jobs: a one-line bar with docs/s and ETA on a terminal, JSON lines otherwise (for
// logs and other programs). Written to stderr, so stdout stays for results; escaped for the terminal
// (terminal-text.ts), whatever a job names its stages. A job reports as often as it likes; what is printed
// is paced: the bar is redrawn at most a few times a second, and a JSON line comes at most once every few
// seconds, the first only once the job has run that long (a sub-second job prints none: its summary says all).
// A job of several stages (dedup) names each: the stage is on the line, its rate and ETA are counted from the
// stage's start, and without a terminal a change of stage is written at once (once the job has run that long).
import { progressLine } from './progress-line.js';
import { escapeTerminal, jsonLine } from './terminal-text.js';

/** A job's counts as it reports them to the progress printer. */
export interface ProgressCounts {
  seen: number;
  total?: number;
  elapsedSeconds: number;
  /** What `seen` counts (default "docs"): the bar's label and the JSON field `<unit>_per_second`. */
  unit?: string;
  /** The stage of a job of several (dedup's signatures, bands, cut, write-back): `seen` and `total` are the stage's. */
  stage?: string;
}

/** Seconds between JSON progress lines (and before the first), by default; NEAR_DUP_PROGRESS_SECONDS overrides it. */
export const DEFAULT_LINE_SECONDS = 5;
/** Seconds between two redraws of the bar on a terminal. */
const REDRAW_SECONDS = 0.1;
/** The width taken for a terminal that gives none (a CI log shown as a terminal). */
const UNSIZED_COLUMNS = 80;

/** How often the progress is printed, and the clock it is timed by. */
export interface ProgressPace {
  /** Seconds between JSON lines, and before the first. */
  lineSeconds?: number;
  /** The clock, in seconds (tests give their own). */
  now?: () => number;
}

/** The pace of JSON lines from the environment: NEAR_DUP_PROGRESS_SECONDS, a number of seconds (0: every report). */
export function lineSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.NEAR_DUP_PROGRESS_SECONDS);
  return env.NEAR_DUP_PROGRESS_SECONDS !== undefined && env.NEAR_DUP_PROGRESS_SECONDS.trim() !== '' && value >= 0 ? value : DEFAULT_LINE_SECONDS;
}

/** A progress printer for a job: a redrawn bar on a terminal, paced JSON lines otherwise (the file header says how). */
export function createProgressPrinter(job: string, stream: NodeJS.WriteStream = process.stderr, extra: string[] = [], pace: ProgressPace = {}) {
  const tty = stream.isTTY === true;
  const now = pace.now ?? (() => performance.now() / 1000);
  const every = tty ? REDRAW_SECONDS : (pace.lineSeconds ?? lineSecondsFromEnv());
  const started = now();
  // On a terminal the first report is drawn at once; a JSON line waits until the job has run `every` seconds.
  let last = tty ? -Infinity : started;
  let printed = false;
  let pending: ProgressCounts | undefined;
  // The stage in hand, and where it began (its first report): its rate is counted from there.
  let stage: { name?: string; seen: number; elapsed: number } = { seen: 0, elapsed: 0 };

  const draw = (p: ProgressCounts): void => {
    const seconds = p.elapsedSeconds - stage.elapsed;
    const rate = seconds > 0 ? (p.seen - stage.seen) / seconds : 0;
    const eta = p.total !== undefined && rate > 0 ? (p.total - p.seen) / rate : undefined;
    const { unit = 'docs', ...counts } = p;
    if (!tty) {
      const record: Record<string, unknown> = { job, ...counts, [`${unit}_per_second`]: Math.round(rate) };
      if (eta !== undefined) record.eta_seconds = Math.round(eta);
      stream.write(jsonLine(record));
      return;
    }
    const named = extra.map((k): [string, number] => [k, Number((p as unknown as Record<string, unknown>)[k] ?? 0)]);
    const line = progressLine({ job: escapeTerminal(job), stage: p.stage === undefined ? undefined : escapeTerminal(p.stage), seen: p.seen, total: p.total, unit: escapeTerminal(unit), rate, eta, named }, stream.columns ?? UNSIZED_COLUMNS);
    // Back to the line's start, the new line, the rest of the old one wiped (a shorter line leaves none of it).
    stream.write(`\r${line}\x1b[K`);
    printed = true;
  };

  return {
    update(p: ProgressCounts): void {
      const t = now();
      const changed = p.stage !== stage.name;
      if (changed) stage = { name: p.stage, seen: p.seen, elapsed: p.elapsedSeconds };
      // A new stage is said at once (without a terminal, once the job has run long enough to say anything).
      const due = changed && (tty || t - started >= every);
      if (!due && t - last < every) {
        pending = p;
        return;
      }
      last = t;
      pending = undefined;
      draw(p);
    },
    done(): void {
      // The bar ends at the last count reported; no closing JSON line (the job's summary follows).
      if (tty && printed && pending) draw(pending);
      if (tty && printed) stream.write('\n');
      pending = undefined;
    },
  };
}
