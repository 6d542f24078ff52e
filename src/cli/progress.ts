// Progress of long jobs: a one-line bar with docs/s and ETA on a terminal, JSON lines otherwise (for
// logs and other programs). Written to stderr, so stdout stays for results; escaped for the terminal
// (terminal-text.ts), whatever a job names its stages. A job reports as often as it likes; what is printed
// is paced: the bar is redrawn at most a few times a second, and a JSON line comes at most once every few
// seconds, the first only once the job has run that long (a sub-second job prints none: its summary says all).
import { escapeTerminal, jsonLine } from './terminal-text.js';

export interface ProgressCounts {
  seen: number;
  total?: number;
  elapsedSeconds: number;
  /** What `seen` counts (default "docs"): the bar's label and the JSON field `<unit>_per_second`. */
  unit?: string;
}

/** Seconds between JSON progress lines (and before the first), by default; NEAR_DUP_PROGRESS_SECONDS overrides it. */
export const DEFAULT_LINE_SECONDS = 5;
/** Seconds between two redraws of the bar on a terminal. */
const REDRAW_SECONDS = 0.1;

export interface ProgressPace {
  /** Seconds between JSON lines, and before the first. */
  lineSeconds?: number;
  /** The clock, in seconds (tests give their own). */
  now?: () => number;
}

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return `${h > 0 ? `${h}:` : ''}${String(m).padStart(h > 0 ? 2 : 1, '0')}:${String(r).padStart(2, '0')}`;
}

/** The pace of JSON lines from the environment: NEAR_DUP_PROGRESS_SECONDS, a number of seconds (0: every report). */
export function lineSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.NEAR_DUP_PROGRESS_SECONDS);
  return env.NEAR_DUP_PROGRESS_SECONDS !== undefined && env.NEAR_DUP_PROGRESS_SECONDS.trim() !== '' && value >= 0 ? value : DEFAULT_LINE_SECONDS;
}

export function createProgressPrinter(job: string, stream: NodeJS.WriteStream = process.stderr, extra: string[] = [], pace: ProgressPace = {}) {
  const tty = stream.isTTY === true;
  const now = pace.now ?? (() => performance.now() / 1000);
  const every = tty ? REDRAW_SECONDS : (pace.lineSeconds ?? lineSecondsFromEnv());
  const started = now();
  // On a terminal the first report is drawn at once; a JSON line waits until the job has run `every` seconds.
  let last = tty ? -Infinity : started;
  let printed = false;
  let pending: ProgressCounts | undefined;

  const draw = (p: ProgressCounts): void => {
    const rate = p.elapsedSeconds > 0 ? p.seen / p.elapsedSeconds : 0;
    const eta = p.total !== undefined && rate > 0 ? (p.total - p.seen) / rate : undefined;
    const { unit = 'docs', ...counts } = p;
    if (!tty) {
      const record: Record<string, unknown> = { job, ...counts, [`${unit}_per_second`]: Math.round(rate) };
      if (eta !== undefined) record.eta_seconds = Math.round(eta);
      stream.write(jsonLine(record));
      return;
    }
    const width = 28;
    const share = p.total ? Math.min(1, p.seen / p.total) : 0;
    const bar = p.total ? `[${'#'.repeat(Math.round(share * width)).padEnd(width, '.')}] ${(share * 100).toFixed(1).padStart(5)}% ` : '';
    const others = extra.map((k) => `${k} ${(p as unknown as Record<string, unknown>)[k] ?? 0}`).join(' ');
    const line = escapeTerminal(`${job} ${bar}${p.seen}${p.total !== undefined ? `/${p.total}` : ''} ${unit}  ${Math.round(rate)} ${unit}/s  ETA ${eta === undefined ? '--:--' : clock(eta)}  ${others}`);
    stream.write(`\r${line.slice(0, (stream.columns ?? 120) - 1).padEnd(Math.min(line.length, (stream.columns ?? 120) - 1))}`);
    printed = true;
  };

  return {
    update(p: ProgressCounts): void {
      const t = now();
      if (t - last < every) {
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
