// Index names with date math, resolved as the engines resolve them, so the proxy can tell whether a write
// to `<news-{now/d}>` lands in an index it signs for:
//
//   <static{date_math{format|time_zone}}static...>     e.g. <logs-{now/M{yyyy.MM}}>, <x-{now-1d{yyyy.MM.dd|+01:00}}>
//
// date_math is `now`, then any of +N or -N units and /unit roundings (y M w d h H m s); the format is a
// java.time pattern (default uuuu.MM.dd), the time zone UTC by default. `\{` and `\}` are literal braces.
// A format letter this reader does not know makes the name unresolvable (undefined), never a wrong name.

export function isDateMathName(name: string): boolean {
  return name.startsWith('<') && name.endsWith('>');
}

const DEFAULT_FORMAT = 'uuuu.MM.dd';

/** The index name `name` resolves to at `now`; undefined if it cannot be read. */
export function resolveDateMath(name: string, now: Date): string | undefined {
  const inner = name.slice(1, -1);
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '\\' && (inner[i + 1] === '{' || inner[i + 1] === '}')) out += inner[++i];
    else if (c === '}') return undefined;
    else if (c !== '{') out += c;
    else {
      const end = closingBrace(inner, i);
      if (end === -1) return undefined;
      const resolved = resolveExpression(inner.slice(i + 1, end), now);
      if (resolved === undefined) return undefined;
      out += resolved;
      i = end;
    }
  }
  return out;
}

/** The index of the `}` closing the `{` at `open` (one nested level, for the format). */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

function resolveExpression(expression: string, now: Date): string | undefined {
  const match = /^([^{]*)(?:\{([^|}]*)(?:\|([^}]*))?\})?$/.exec(expression);
  if (!match) return undefined;
  const [, math, format = DEFAULT_FORMAT, zone = 'UTC'] = match;
  const offset = zoneOffsetMinutes(zone.trim(), now);
  if (offset === undefined) return undefined;
  // Work on a Date whose UTC fields read as the wall clock of the zone.
  const local = applyMath(math.trim(), new Date(now.getTime() + offset * 60_000));
  return local === undefined ? undefined : formatDate(local, format || DEFAULT_FORMAT);
}

const UNIT = '[yMwdhHms]';

function applyMath(math: string, date: Date): Date | undefined {
  if (!math.startsWith('now')) return undefined;
  const steps = math.slice(3);
  const step = new RegExp(`([+-])(\\d+)(${UNIT})|/(${UNIT})`, 'y');
  let at = 0;
  while (at < steps.length) {
    step.lastIndex = at;
    const m = step.exec(steps);
    if (!m) return undefined;
    if (m[4]) roundDown(date, m[4]);
    else add(date, m[3], (m[1] === '-' ? -1 : 1) * Number(m[2]));
    at = step.lastIndex;
  }
  return date;
}

function add(date: Date, unit: string, n: number): void {
  if (unit === 'y' || unit === 'M') addMonths(date, unit === 'y' ? 12 * n : n);
  else if (unit === 'w') date.setUTCDate(date.getUTCDate() + 7 * n);
  else if (unit === 'd') date.setUTCDate(date.getUTCDate() + n);
  else if (unit === 'h' || unit === 'H') date.setUTCHours(date.getUTCHours() + n);
  else if (unit === 'm') date.setUTCMinutes(date.getUTCMinutes() + n);
  else date.setUTCSeconds(date.getUTCSeconds() + n);
}

/** Months added as java.time adds them: the day of month kept, or the month's last day if it has fewer. */
function addMonths(date: Date, n: number): void {
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() + n);
  const last = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, last));
}

function roundDown(date: Date, unit: string): void {
  const order = ['y', 'M', 'd', 'h', 'm', 's'];
  const level = unit === 'w' ? order.indexOf('d') : order.indexOf(unit === 'H' ? 'h' : unit);
  if (level < 1) date.setUTCMonth(0);
  if (level < 2) date.setUTCDate(1);
  if (level < 3) date.setUTCHours(0);
  if (level < 4) date.setUTCMinutes(0);
  if (level < 5) date.setUTCSeconds(0);
  date.setUTCMilliseconds(0);
  if (unit === 'w') date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7)); // ISO weeks start on Monday
}

/** Minutes east of UTC: Z, UTC, GMT, +01:00, -0530, or a tz database name (Europe/Paris). */
function zoneOffsetMinutes(zone: string, at: Date): number | undefined {
  if (zone === '' || zone === 'Z' || zone === 'UTC' || zone === 'GMT') return 0;
  const fixed = /^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(zone);
  if (fixed) return (fixed[1] === '-' ? -1 : 1) * (Number(fixed[2]) * 60 + Number(fixed[3] ?? 0));
  try {
    const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' }).formatToParts(at);
    const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
    const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'));
    return Math.round((wall - Math.floor(at.getTime() / 60_000) * 60_000) / 60_000);
  } catch {
    return undefined;
  }
}

/** A java.time pattern with the letters index names use: y u (year), M, d, H, m, s, S; quoted text and punctuation as they are. */
function formatDate(date: Date, pattern: string): string | undefined {
  let out = '';
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i];
    if (c === "'") {
      // Quoted text; '' is a quote, inside quotes or out.
      const quoted = /^'((?:[^']|'')*)'/.exec(pattern.slice(i));
      if (pattern[i + 1] === "'") {
        out += "'";
        i += 2;
      } else if (quoted) {
        out += quoted[1].replaceAll("''", "'");
        i += quoted[0].length;
      } else return undefined;
      continue;
    }
    let run = 1;
    while (pattern[i + run] === c) run++;
    i += run;
    if (!/[A-Za-z]/.test(c)) out += c.repeat(run);
    else {
      const field = formatField(date, c, run);
      if (field === undefined) return undefined;
      out += field;
    }
  }
  return out;
}

function formatField(date: Date, letter: string, width: number): string | undefined {
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  switch (letter) {
    case 'y':
    case 'u': {
      const year = date.getUTCFullYear();
      return width === 2 ? pad(year % 100, 2) : pad(year, width);
    }
    case 'M':
      return width <= 2 ? pad(date.getUTCMonth() + 1, width) : undefined;
    case 'd':
      return width <= 2 ? pad(date.getUTCDate(), width) : undefined;
    case 'H':
      return width <= 2 ? pad(date.getUTCHours(), width) : undefined;
    case 'm':
      return width <= 2 ? pad(date.getUTCMinutes(), width) : undefined;
    case 's':
      return width <= 2 ? pad(date.getUTCSeconds(), width) : undefined;
    case 'S':
      return pad(date.getUTCMilliseconds(), 3).slice(0, width).padEnd(width, '0');
    default:
      return undefined;
  }
}
