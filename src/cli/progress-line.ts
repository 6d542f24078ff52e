// The progress bar's one line, laid out for the terminal's width: the counts first, then what helps most
// (the share done, the ETA, what failed), the rate, the job's name and the bar only when there is room. Each part is
// shown whole or not at all, so that a narrow terminal never shows "ETA " or "unchanged 1000 failed".

/** A piece of the line: its text, its place on the line, and how much it matters (0 most). */
interface Part {
  text: string;
  order: number;
  rank: number;
  /** Put after the part before it with ", " (the named counts read as one list). */
  listed?: boolean;
}

/** What the progress line shows: the job, its stage, and its counts. */
export interface LineCounts {
  job: string;
  /** The stage of a job of several, shown after the job's name. */
  stage?: string;
  seen: number;
  total?: number;
  unit: string;
  rate: number;
  /** Seconds left, when it can be told. */
  eta?: number;
  /** Named counts (annotated, unchanged, failed), in the order shown. */
  named: Array<[string, number]>;
}

/** The bar's width when there is room for it, and the least worth drawing. */
const BAR_MAX = 28;
const BAR_MIN = 10;

/** Seconds as m:ss or h:mm:ss, for the elapsed time and the ETA. */
export function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return `${h > 0 ? `${h}:` : ''}${String(m).padStart(h > 0 ? 2 : 1, '0')}:${String(r).padStart(2, '0')}`;
}

function parts(c: LineCounts): Part[] {
  const share = c.total ? Math.min(1, c.seen / c.total) : undefined;
  // "failed" matters more than the other named counts, and they more than the rate and the job's name (the user
  // typed it): shown first when room is short.
  const named = c.named.map(([name, value], i): Part => ({ text: `${name} ${value}`, order: 6 + i / 100, rank: name === 'failed' ? 4 : 5 + i / 100, listed: i > 0 }));
  return [
    { text: `${c.seen}${c.total !== undefined ? `/${c.total}` : ''} ${c.unit}`, order: 1, rank: 0 },
    ...(share === undefined ? [] : [{ text: `${(share * 100).toFixed(1)}%`, order: 2, rank: 1 }]),
    { text: `ETA ${c.eta === undefined ? '--:--' : clock(c.eta)}`, order: 4, rank: c.eta === undefined ? 7 : 2 },
    { text: c.job, order: 0, rank: 6.5 },
    ...(c.stage === undefined ? [] : [{ text: c.stage, order: 0.5, rank: 0.5 }]),
    ...named,
    { text: `${Math.round(c.rate)} ${c.unit}/s`, order: 5, rank: 6 },
  ];
}

function join(chosen: Part[]): string {
  return [...chosen].sort((a, b) => a.order - b.order).reduce((line, p, i, all) => (i === 0 ? p.text : `${line}${p.listed && all[i - 1].listed !== undefined ? ', ' : '  '}${p.text}`), '');
}

/** The line for a terminal `width` columns wide: at most width - 1 characters (the last column would wrap). */
export function progressLine(c: LineCounts, width: number): string {
  const room = width - 1;
  const chosen: Part[] = [];
  for (const part of parts(c).sort((a, b) => a.rank - b.rank)) {
    if (join([...chosen, part]).length <= room) chosen.push(part);
  }
  if (chosen.length === 0) return '';
  const share = c.total ? Math.min(1, c.seen / c.total) : undefined;
  const left = room - join(chosen).length - 2 - 2; // two spaces before it, and its brackets
  if (share !== undefined && left >= BAR_MIN) {
    const size = Math.min(BAR_MAX, left);
    chosen.push({ text: `[${'#'.repeat(Math.round(share * size)).padEnd(size, '.')}]`, order: 3, rank: 8 });
  }
  return join(chosen);
}
