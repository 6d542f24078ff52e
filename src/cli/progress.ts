// Progress of long jobs: a one-line bar with docs/s and ETA on a terminal, JSON lines otherwise (for
// logs and other programs). Written to stderr, so stdout stays for results; escaped for the terminal
// (terminal-text.ts), whatever a job names its stages.
import { escapeTerminal, jsonLine } from './terminal-text.js';

export interface ProgressCounts {
  seen: number;
  total?: number;
  elapsedSeconds: number;
  /** What `seen` counts (default "docs"): the bar's label and the JSON field `<unit>_per_second`. */
  unit?: string;
}

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return `${h > 0 ? `${h}:` : ''}${String(m).padStart(h > 0 ? 2 : 1, '0')}:${String(r).padStart(2, '0')}`;
}

export function createProgressPrinter(job: string, stream: NodeJS.WriteStream = process.stderr, extra: string[] = []) {
  const tty = stream.isTTY === true;
  let printed = false;
  return {
    update(p: ProgressCounts): void {
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
    },
    done(): void {
      if (tty && printed) stream.write('\n');
    },
  };
}
