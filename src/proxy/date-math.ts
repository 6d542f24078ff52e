// Index names with date math, resolved as the engines resolve them, so the proxy knows which index a write
// to `<news-{now/d}>` lands in (and sends it there by that name: see targets.ts):
//
//   <static{date_math{format|time_zone}}static...>     e.g. <logs-{now/M{yyyy.MM}}>, <x-{now-1d{yyyy.MM.dd|+01:00}}>
//
// Read step for step as the engines' DateMathExpressionResolver reads it (the same code in OpenSearch and
// Elasticsearch): `\` escapes the next character (`\{`, `\}`, `\\`; a `\\` inside a placeholder lands
// before it, as theirs does); an unescaped `}` outside a placeholder, a placeholder left open, an empty
// format and an empty result are errors. The date math is `now` or a date in the format followed by `||`,
// then +N, -N (N may be left out: 1) and /unit (y M w d h H m s), worked as java.time works them in the
// time zone (days, weeks, months and years on the wall clock, hours, minutes and seconds on the time line;
// a wall time in a daylight-saving gap moved forward, one in an overlap kept at its earlier offset). The
// format is a java.time pattern (default uuuu.MM.dd): numeric fields (u y Y D M L d Q q w W e c H k K h m s
// S n N A g), the offsets X x Z, quoted text, optional sections [...] (always printed: a date has every
// field), padding p; the named formats whose output is a valid index name (date, basic_date, year_month,
// epoch_millis, ...). The time zone is an offset (+01:00, UTC+1), a tz database name (Europe/Paris) or one
// of the engines' old short names (EST, HST, MST, ROC, Eire); UTC by default.
//
// What the proxy cannot compute exactly is never guessed: names of months and days and other text fields
// (upper case, so no index name anyway), `F` (OpenSearch 2 and 3 print it differently), camelCase format
// names (OpenSearch takes them, Elasticsearch 9 does not), dates before the year 1 or after 9999 in a tz
// database zone, a fixed date in a format other than plain numbers. Those, and the expressions the engines
// refuse, come back as such, with the reason.

/** Whether an index name is written with date math (`<...>`), to be resolved before it is matched. */
export function isDateMathName(name: string): boolean {
  return name.startsWith('<') && name.endsWith('>');
}

/** A resolved name; or why not: `refused`, the engines refuse the expression; `unsupported`, the proxy cannot compute it exactly. */
export type DateMathOutcome = { name: string } | { refused: string } | { unsupported: string };

class Failure extends Error {
  constructor(
    readonly kind: 'refused' | 'unsupported',
    reason: string,
  ) {
    super(reason);
  }
}
const refused = (reason: string): never => {
  throw new Failure('refused', reason);
};
const unsupported = (reason: string): never => {
  throw new Failure('unsupported', reason);
};

/** The index name `name` resolves to at `nowMs` (epoch milliseconds), or why it does not. */
export function readDateMath(name: string, nowMs: number): DateMathOutcome {
  if (!isDateMathName(name)) return { name };
  try {
    return { name: resolveExpression(name, nowMs) };
  } catch (err) {
    if (err instanceof Failure) return err.kind === 'refused' ? { refused: err.message } : { unsupported: err.message };
    throw err;
  }
}

/** The index name `name` resolves to at `now`; undefined if the proxy cannot tell it exactly. */
export function resolveDateMath(name: string, now: Date): string | undefined {
  const outcome = readDateMath(name, now.getTime());
  return 'name' in outcome ? outcome.name : undefined;
}

/** The engines' state machine over `<...>`: text, escapes, placeholders with their formats. */
function resolveExpression(expression: string, nowMs: number): string {
  let escaping = false;
  let inDateFormat = false;
  let inPlaceHolder = false;
  let before = '';
  let inPlace = '';
  for (let i = 1; i < expression.length - 1; i++) {
    const escapedChar = escaping;
    escaping = false;
    const c = expression[i];
    if (c === '\\') {
      if (escapedChar) before += c;
      else escaping = true;
      continue;
    }
    if (inPlaceHolder) {
      if (c === '{') {
        if (inDateFormat && escapedChar) inPlace += c;
        else if (!inDateFormat) {
          inDateFormat = true;
          inPlace += c;
        } else refused(`invalid character in placeholder at position [${i}]`);
      } else if (c === '}') {
        if (inDateFormat && escapedChar) inPlace += c;
        else if (inDateFormat) {
          inDateFormat = false;
          inPlace += c;
        } else {
          before += placeholder(inPlace, nowMs);
          inPlace = '';
          inPlaceHolder = false;
        }
      } else inPlace += c;
    } else if (c === '{') {
      if (escapedChar) before += c;
      else inPlaceHolder = true;
    } else if (c === '}' && !escapedChar) {
      refused(`invalid character at position [${i}]: { and } must be escaped with \\ in an index name`);
    } else before += c;
  }
  if (inPlaceHolder) refused('date math placeholder is open ended');
  if (before === '') refused('nothing captured');
  return before;
}

/** One `{math{format|zone}}`, resolved. */
function placeholder(text: string, nowMs: number): string {
  const open = text.indexOf('{');
  let math = text;
  let format: Format = DEFAULT_FORMAT;
  let zone: Zone = UTC;
  if (open >= 0) {
    if (text.lastIndexOf('}') !== text.length - 1) refused(`missing closing } for date math format in [${text}]`);
    if (open === text.length - 2) refused(`missing date format in [${text}]`);
    math = text.slice(0, open);
    const patternAndZone = text.slice(open + 1, -1);
    const bar = patternAndZone.indexOf('|');
    format = compileFormat(bar === -1 ? patternAndZone : patternAndZone.slice(0, bar));
    if (bar !== -1) zone = parseZone(patternAndZone.slice(bar + 1));
  }
  return print(format, evaluate(math, nowMs, zone, format), zone);
}

// ---------------------------------------------------------------------------------------------------
// Time zones and zoned date-times, as java.time has them. A date-time is its wall clock ("local", in
// milliseconds as if it were UTC) and its offset in seconds.

interface Zone {
  /** Offset east of UTC, seconds, at an instant. */
  offsetAt(instantMs: number): number;
}

interface Zoned {
  local: number;
  offset: number;
}

const UTC: Zone = { offsetAt: () => 0 };
const fixedZone = (seconds: number): Zone => ({ offsetAt: () => seconds });

const MS_DAY = 86_400_000;
/** The engines' DateUtils.of: old short ids mapped first. */
const SHORT_ZONES: Record<string, string> = { EST: '-05:00', HST: '-10:00', MST: '-07:00', ROC: 'Asia/Taipei', Eire: 'Europe/London' };

/** java.time's ZoneId.of, after the engines' own short ids. */
function parseZone(id: string): Zone {
  const text = SHORT_ZONES[id] ?? id;
  if (text === 'Z') return UTC;
  if (text.startsWith('+') || text.startsWith('-')) return fixedZone(parseOffset(text, id));
  for (const prefix of ['UTC', 'GMT', 'UT']) {
    if (!text.startsWith(prefix)) continue;
    const rest = text.slice(prefix.length);
    if (rest === '') return UTC;
    if (rest.startsWith('+') || rest.startsWith('-')) return fixedZone(parseOffset(rest, id));
    break; // a region id that starts so (GMT0, UCT): below
  }
  if (!/^[A-Za-z][A-Za-z0-9~/._+-]+$/.test(text)) refused(`invalid time zone [${id}]`);
  return regionZone(text);
}

/** ZoneOffset.of: ±h, ±hh, ±hh:mm, ±hhmm, ±hh:mm:ss, ±hhmmss, at most ±18:00. */
function parseOffset(text: string, id: string): number {
  const m = /^([+-])(?:(\d)|(\d\d)|(\d\d):(\d\d)|(\d\d)(\d\d)|(\d\d):(\d\d):(\d\d)|(\d\d)(\d\d)(\d\d))$/.exec(text);
  if (!m) return refused(`invalid time zone offset [${id}]`);
  const [h, mi, s] = m[2] !== undefined ? [m[2], '0', '0'] : m[3] !== undefined ? [m[3], '0', '0'] : m[4] !== undefined ? [m[4], m[5], '0'] : m[6] !== undefined ? [m[6], m[7], '0'] : m[8] !== undefined ? [m[8], m[9], m[10]] : [m[11], m[12], m[13]];
  const [hours, minutes, seconds] = [Number(h), Number(mi), Number(s)];
  if (hours > 18 || minutes > 59 || seconds > 59 || (hours === 18 && (minutes > 0 || seconds > 0))) refused(`time zone offset out of range [${id}]`);
  return (m[1] === '-' ? -1 : 1) * (hours * 3600 + minutes * 60 + seconds);
}

const regionFormats = new Map<string, Intl.DateTimeFormat>();
const FIRST_MS = Date.UTC(1, 0, 2);
const LAST_MS = Date.UTC(9999, 11, 30);

/** A tz database zone, its offsets read from the platform's time zone data. */
function regionZone(id: string): Zone {
  let format = regionFormats.get(id);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat('en-US', { timeZone: id, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    } catch {
      return unsupported(`time zone [${id}] is not known here`);
    }
    // Java reads the ids case for case; the platform does not. A canonical id with other case is refused
    // (europe/paris); a link (US/Eastern) must at least have its parts capitalized.
    const canonical = format.resolvedOptions().timeZone;
    const sameCase = canonical.toLowerCase() === id.toLowerCase() ? canonical === id : id.split('/').every((part) => /^[A-Z]/.test(part));
    if (!sameCase) return unsupported(`time zone [${id}] (java.time reads its case as given)`);
    if (regionFormats.size > 1000) regionFormats.clear();
    regionFormats.set(id, format);
  }
  const fmt = format;
  return {
    offsetAt(instantMs) {
      if (instantMs < FIRST_MS || instantMs > LAST_MS) unsupported(`a date outside the years 1 to 9999 in time zone [${id}]`);
      const parts = fmt.formatToParts(new Date(instantMs));
      const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
      const wall = new Date(0);
      wall.setUTCFullYear(get('year'), get('month') - 1, get('day'));
      wall.setUTCHours(get('hour'), get('minute'), get('second'), 0);
      return Math.round((wall.getTime() - Math.floor(instantMs / 1000) * 1000) / 1000);
    },
  };
}

function ofInstant(instantMs: number, zone: Zone): Zoned {
  const offset = zone.offsetAt(instantMs);
  return { local: instantMs + offset * 1000, offset };
}

/** ZonedDateTime.ofLocal: the offset kept when still valid (an overlap), the earlier one otherwise; a wall time in a gap moved on by the gap. */
function ofLocal(local: number, zone: Zone, preferred?: number): Zoned {
  const before = zone.offsetAt(local - 18 * 3_600_000);
  const after = zone.offsetAt(local + 18 * 3_600_000);
  const valid = [...new Set([before, after])].filter((o) => zone.offsetAt(local - o * 1000) === o);
  if (valid.length === 0) return { local: local + (after - before) * 1000, offset: after };
  return { local, offset: preferred !== undefined && valid.includes(preferred) ? preferred : valid[0] };
}

const instantOf = (z: Zoned) => z.local - z.offset * 1000;

// ---------------------------------------------------------------------------------------------------
// Date math (the engines' JavaDateMathParser)

const MAX_YEAR = 200_000;

function evaluate(math: string, nowMs: number, zone: Zone, format: Format): number {
  let start: Zoned;
  let steps: string;
  if (math.startsWith('now')) {
    start = ofInstant(nowMs, zone);
    steps = math.slice(3);
  } else {
    const bars = math.indexOf('||');
    start = ofLocal(parseDate(bars === -1 ? math : math.slice(0, bars), format), zone);
    steps = bars === -1 ? '' : math.slice(bars + 2);
  }
  return instantOf(applyMath(steps, start, zone));
}

function applyMath(steps: string, start: Zoned, zone: Zone): Zoned {
  let at = start;
  const isDigit = (c: string | undefined) => c !== undefined && /\p{Nd}/u.test(c);
  for (let i = 0; i < steps.length; ) {
    const op = steps[i++];
    if (op !== '/' && op !== '+' && op !== '-') refused(`operator not supported for date math [${steps}]`);
    if (i >= steps.length) refused(`truncated date math [${steps}]`);
    let n = 1;
    if (isDigit(steps[i])) {
      const from = i;
      while (i < steps.length && isDigit(steps[i])) i++;
      if (i >= steps.length) refused(`truncated date math [${steps}]`);
      const digits = steps.slice(from, i);
      if (!/^[0-9]+$/.test(digits) || digits.replace(/^0+/, '').length > 9) unsupported(`the number [${digits}] in date math`);
      n = Number(digits);
    }
    if (op === '/' && n !== 1) refused(`rounding / can only be used on single unit types [${steps}]`);
    const unit = steps[i++];
    if (!'yMwdhHms'.includes(unit)) refused(`unit [${unit}] not supported for date math [${steps}]`);
    at = op === '/' ? roundDown(at, unit, zone) : add(at, unit, op === '-' ? -n : n, zone);
    if (!(Math.abs(new Date(at.local).getUTCFullYear()) <= MAX_YEAR)) unsupported('a date that far away');
  }
  return at;
}

/** The wall clock changed by `change`, then given its offset again (the one it had, if still valid). */
function withLocal(z: Zoned, zone: Zone, change: (d: Date) => void): Zoned {
  const d = new Date(z.local);
  change(d);
  return ofLocal(d.getTime(), zone, z.offset);
}

const startOfDay = (d: Date) => d.setUTCHours(0, 0, 0, 0);

function roundDown(z: Zoned, unit: string, zone: Zone): Zoned {
  switch (unit) {
    case 'y':
      return withLocal(
        withLocal(z, zone, (d) => d.setUTCMonth(0, 1)),
        zone,
        startOfDay,
      );
    case 'M':
      return withLocal(
        withLocal(z, zone, (d) => d.setUTCDate(1)),
        zone,
        startOfDay,
      );
    case 'w':
      return withLocal(
        withLocal(z, zone, (d) => d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7))),
        zone,
        startOfDay,
      );
    case 'd':
      return withLocal(z, zone, startOfDay);
    case 'h':
    case 'H':
      return withLocal(
        withLocal(
          withLocal(z, zone, (d) => d.setUTCMinutes(0)),
          zone,
          (d) => d.setUTCSeconds(0),
        ),
        zone,
        (d) => d.setUTCMilliseconds(0),
      );
    case 'm':
      return withLocal(
        withLocal(z, zone, (d) => d.setUTCSeconds(0)),
        zone,
        (d) => d.setUTCMilliseconds(0),
      );
    default:
      return withLocal(z, zone, (d) => d.setUTCMilliseconds(0));
  }
}

function add(z: Zoned, unit: string, n: number, zone: Zone): Zoned {
  switch (unit) {
    case 'y':
      return withLocal(z, zone, (d) => addMonths(d, 12 * n));
    case 'M':
      return withLocal(z, zone, (d) => addMonths(d, n));
    case 'w':
      return withLocal(z, zone, (d) => d.setUTCDate(d.getUTCDate() + 7 * n));
    case 'd':
      return withLocal(z, zone, (d) => d.setUTCDate(d.getUTCDate() + n));
    default: {
      const ms = (unit === 'm' ? 60_000 : unit === 's' ? 1000 : 3_600_000) * n;
      return ofInstant(instantOf(z) + ms, zone);
    }
  }
}

/** Months added as java.time adds them: the day of month kept, or the month's last day if it has fewer. */
function addMonths(d: Date, n: number): void {
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + n);
  d.setUTCDate(Math.min(day, daysInMonth(d.getUTCFullYear(), d.getUTCMonth())));
}

function daysInMonth(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month + 1, 0);
  return d.getUTCDate();
}

// ---------------------------------------------------------------------------------------------------
// Formats: java.time patterns compiled to printers (DateTimeFormatterBuilder.appendPattern's rules).

type Field = 'year' | 'yearOfEra' | 'month' | 'day' | 'dayOfYear' | 'quarter' | 'hour' | 'clockHour' | 'hourOfAmPm' | 'clockHourOfAmPm' | 'minute' | 'second' | 'nano' | 'milliOfDay' | 'nanoOfDay' | 'mjd';
type WeekField = 'weekBasedYear' | 'weekOfWeekBasedYear' | 'weekOfMonth' | 'dayOfWeek';
type Sign = 'normal' | 'notNegative' | 'exceedsPad';

type Printer =
  | { kind: 'literal'; text: string }
  | { kind: 'optional'; printers: Printer[] }
  | { kind: 'pad'; width: number; printer: Printer }
  | { kind: 'number'; field: Field | WeekField; min: number; max: number; sign: Sign }
  | { kind: 'reduced'; field: 'year' | 'yearOfEra' | 'weekBasedYear' }
  | { kind: 'fraction'; width: number }
  | { kind: 'offset'; type: number; zero: string }
  | { kind: 'epoch'; unit: 'millis' | 'seconds' };

interface Format {
  printers: Printer[];
  /** The pattern, for parsing a fixed date; undefined for the named formats. */
  pattern?: string;
}

/** The engines' named formats whose output can be an index name, as the patterns they print. */
const NAMED = new Map<string, string>([
  ['date', 'uuuu-MM-dd'],
  ['strict_date', 'uuuu-MM-dd'],
  ['year_month_day', 'uuuu-MM-dd'],
  ['strict_year_month_day', 'uuuu-MM-dd'],
  ['year_month', 'uuuu-MM'],
  ['strict_year_month', 'uuuu-MM'],
  ['year', 'uuuu'],
  ['strict_year', 'uuuu'],
  ['basic_date', 'uuuuMMdd'],
  ['ordinal_date', 'uuuu-DDD'],
  ['strict_ordinal_date', 'uuuu-DDD'],
  ['basic_ordinal_date', 'uuuuDDD'],
  ['hour', 'HH'],
  ['strict_hour', 'HH'],
]);

/** The engines' other named formats (times with `:` and `T`, weeks with `W`: not index names; weekyear: read with other weeks than the patterns'). */
const OTHER_NAMED = new Set(
  [
    'iso8601',
    'basic_date_time',
    'basic_date_time_no_millis',
    'basic_ordinal_date_time',
    'basic_ordinal_date_time_no_millis',
    'basic_time',
    'basic_time_no_millis',
    'basic_t_time',
    'basic_t_time_no_millis',
    'basic_week_date',
    'basic_week_date_time',
    'basic_week_date_time_no_millis',
    'date_hour',
    'date_hour_minute',
    'date_hour_minute_second',
    'date_hour_minute_second_fraction',
    'date_hour_minute_second_millis',
    'date_optional_time',
    'date_optional_time_nanos',
    'date_time',
    'date_time_no_millis',
    'hour_minute',
    'hour_minute_second',
    'hour_minute_second_fraction',
    'hour_minute_second_millis',
    'ordinal_date_time',
    'ordinal_date_time_no_millis',
    'time',
    'time_no_millis',
    't_time',
    't_time_no_millis',
    'week_date',
    'week_date_time',
    'week_date_time_no_millis',
    'weekyear',
    'weekyear_week',
    'weekyear_week_day',
  ].flatMap((name) => [name, `strict_${name}`]),
);

const CAMEL_NAMED = new Set([...NAMED.keys(), ...OTHER_NAMED, 'epoch_millis', 'epoch_second'].map((name) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())).filter((name) => /[A-Z]/.test(name)));

/** DateFormatter.forPattern: a leading 8 dropped (the 6.x way of asking for java.time), trimmed, a named format or a pattern. */
function compileFormat(input: string): Format {
  if (input === '') refused('no date pattern provided');
  const text = javaTrim(input.startsWith('8') ? input.slice(1) : input);
  if (text === '') refused('no date pattern provided');
  if (text === 'epoch_millis') return { printers: [{ kind: 'epoch', unit: 'millis' }] };
  if (text === 'epoch_second') return { printers: [{ kind: 'epoch', unit: 'seconds' }] };
  const named = NAMED.get(text);
  if (named !== undefined) return { printers: compilePattern(named) };
  if (OTHER_NAMED.has(text)) unsupported(`the named format [${text}]`);
  // OpenSearch also takes the names in camelCase (basicDate); Elasticsearch 9 reads them as patterns.
  if (CAMEL_NAMED.has(text)) unsupported(`the format [${text}] (a name to OpenSearch, a pattern to Elasticsearch 9)`);
  return { printers: compilePattern(text), pattern: text };
}

/** Java's String.trim: every char up to U+0020 off both ends. */
function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

const isLetter = (c: string) => (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');

/**
 * A section of a pattern being compiled. `paddedValue`: the last number appended was padded, and nothing
 * has come between: java.time fixes the width of a number printed right before another (for parsing) and
 * fails on a padded one (a ClassCastException, which the engines answer 400 or 500); padding, text, an
 * offset or an optional section start afresh (tested on every engine: `pmd` fails, `pmpd` does not).
 */
interface Section {
  printers: Printer[];
  paddedValue?: boolean;
}

const isValuePrinter = (p: Printer) => p.kind === 'number' || p.kind === 'reduced' || p.kind === 'fraction';

function compilePattern(pattern: string): Printer[] {
  const stack: Section[] = [{ printers: [] }];
  const top = () => stack[stack.length - 1];
  let pad = 0;
  const append = (printer: Printer) => {
    const section = top();
    const padded = pad > 0;
    section.printers.push(padded ? { kind: 'pad', width: pad, printer } : printer);
    pad = 0;
    if (!isValuePrinter(printer)) section.paddedValue = undefined;
    else if (padded) section.paddedValue = true;
    else if (section.paddedValue) refused(`a padded number cannot be followed by another number in [${pattern}]`);
    else section.paddedValue = false;
  };
  for (let pos = 0; pos < pattern.length; pos++) {
    let cur = pattern[pos];
    if (isLetter(cur)) {
      let start = pos++;
      while (pos < pattern.length && pattern[pos] === cur) pos++;
      let count = pos - start;
      if (cur === 'p') {
        if (pos < pattern.length && isLetter(pattern[pos])) {
          pad = count;
          cur = pattern[pos];
          start = pos++;
          while (pos < pattern.length && pattern[pos] === cur) pos++;
          count = pos - start;
        } else refused(`pad letter 'p' must be followed by valid pad pattern: ${pattern}`);
      }
      append(letter(cur, count));
      pos--;
    } else if (cur === "'") {
      const start = pos++;
      for (; pos < pattern.length; pos++) {
        if (pattern[pos] === "'") {
          if (pattern[pos + 1] === "'") pos++;
          else break;
        }
      }
      if (pos >= pattern.length) refused(`pattern ends with an incomplete string literal: ${pattern}`);
      const text = pattern.slice(start + 1, pos);
      append({ kind: 'literal', text: text === '' ? "'" : text.replaceAll("''", "'") });
    } else if (cur === '[') {
      top().paddedValue = undefined;
      stack.push({ printers: [] });
    } else if (cur === ']') {
      if (stack.length === 1) refused(`pattern invalid as it contains ] without previous [: ${pattern}`);
      closeSection();
    } else if (cur === '{' || cur === '}' || cur === '#') {
      refused(`pattern includes reserved character: '${cur}'`);
    } else append({ kind: 'literal', text: cur });
  }
  while (stack.length > 1) closeSection();
  return stack[0].printers;

  function closeSection(): void {
    const section = stack.pop() as Section;
    if (section.printers.length > 0) append({ kind: 'optional', printers: section.printers });
  }
}

const FIELDS: Record<string, Field> = { u: 'year', y: 'yearOfEra', M: 'month', L: 'month', d: 'day', D: 'dayOfYear', Q: 'quarter', q: 'quarter', H: 'hour', k: 'clockHour', K: 'hourOfAmPm', h: 'clockHourOfAmPm', m: 'minute', s: 'second', A: 'milliOfDay', n: 'nano', N: 'nanoOfDay', g: 'mjd' };
/** X, x and Z counts as OffsetIdPrinterParser's pattern numbers. */
const OFFSET_TYPES = [0, 1, 3, 4, 5, 6];

/** One run of a pattern letter: parseField's rules. */
function letter(c: string, count: number): Printer {
  const tooMany = () => refused(`too many pattern letters: ${c}`);
  const num = (field: Field | WeekField, min: number, max: number, sign: Sign): Printer => ({ kind: 'number', field, min, max, sign });
  const value = (field: Field) => (count === 1 ? num(field, 1, 19, 'normal') : num(field, count, count, 'notNegative'));
  switch (c) {
    case 'u':
    case 'y':
      if (count > 19) refused(`the width must be from 1 to 19 inclusive but was ${count}`);
      if (count === 2) return { kind: 'reduced', field: FIELDS[c] as 'year' | 'yearOfEra' };
      return num(FIELDS[c], count, 19, count < 4 ? 'normal' : 'exceedsPad');
    case 'Y':
      if (count > 19) refused(`the width must be from 1 to 19 inclusive but was ${count}`);
      if (count === 2) return { kind: 'reduced', field: 'weekBasedYear' };
      return num('weekBasedYear', count, 19, count < 4 ? 'normal' : 'exceedsPad');
    case 'w':
      if (count > 2) tooMany();
      return num('weekOfWeekBasedYear', count === 2 ? 2 : 1, 2, 'notNegative');
    case 'W':
      if (count > 1) tooMany();
      return num('weekOfMonth', 1, 2, 'notNegative');
    case 'c':
      if (count === 2) refused('invalid pattern "cc"');
      if (count === 1) return num('dayOfWeek', 1, 2, 'notNegative');
      return count > 5 ? tooMany() : unsupported(`the text field "${c.repeat(count)}" (names are not index names)`);
    case 'e':
      if (count <= 2) return num('dayOfWeek', count === 2 ? 2 : 1, 2, 'notNegative');
      return count > 5 ? tooMany() : unsupported(`the text field "${c.repeat(count)}" (names are not index names)`);
    case 'M':
    case 'L':
    case 'Q':
    case 'q':
      if (count <= 2) return count === 1 ? num(FIELDS[c], 1, 19, 'normal') : num(FIELDS[c], 2, 2, 'notNegative');
      return count > 5 ? tooMany() : unsupported(`the text field "${c.repeat(count)}" (names are not index names)`);
    case 'E':
      return count > 5 ? tooMany() : unsupported(`the text field "${c.repeat(count)}" (names are not index names)`);
    case 'a':
      return count > 1 ? tooMany() : unsupported('the text field "a"');
    case 'G':
      return count > 5 ? tooMany() : unsupported(`the text field "${c.repeat(count)}"`);
    case 'S':
      if (count > 9) refused(`minimum width must be from 0 to 9 inclusive but was ${count}`);
      return { kind: 'fraction', width: count };
    case 'F':
      return count > 1 ? tooMany() : unsupported('"F" (the engines print it differently by their Java version)');
    case 'd':
    case 'h':
    case 'H':
    case 'k':
    case 'K':
    case 'm':
    case 's':
      if (count > 2) tooMany();
      return value(FIELDS[c]);
    case 'D':
      if (count === 1) return num('dayOfYear', 1, 19, 'normal');
      if (count <= 3) return num('dayOfYear', count, 3, 'notNegative');
      return tooMany();
    case 'g':
      if (count > 19) refused(`the width must be from 1 to 19 inclusive but was ${count}`);
      return num('mjd', count, 19, 'normal');
    case 'A':
    case 'n':
    case 'N':
      if (count > 19) refused(`the width must be from 1 to 19 inclusive but was ${count}`);
      return num(FIELDS[c], count, 19, 'notNegative');
    case 'X':
    case 'x':
      if (count > 5) tooMany();
      return { kind: 'offset', type: OFFSET_TYPES[count], zero: c === 'X' ? 'Z' : count === 1 ? '+00' : count % 2 === 0 ? '+0000' : '+00:00' };
    case 'Z':
      if (count < 4) return { kind: 'offset', type: 3, zero: '+0000' };
      if (count === 5) return { kind: 'offset', type: 6, zero: 'Z' };
      return count === 4 ? unsupported('"ZZZZ" (a localized offset)') : tooMany();
    case 'O':
      return count === 1 || count === 4 ? unsupported('"O" (a localized offset)') : refused('pattern letter count must be 1 or 4: O');
    case 'V':
      return count === 2 ? unsupported('"VV" (a time zone id)') : refused('pattern letter count must be 2: V');
    case 'v':
      return count === 1 || count === 4 ? unsupported('"v" (a time zone name)') : refused('wrong number of pattern letters: v');
    case 'z':
      return count > 4 ? tooMany() : unsupported('"z" (a time zone name)');
    case 'B':
      return count === 1 || count === 4 || count === 5 ? unsupported('"B" (a day period)') : refused('wrong number of pattern letters: B');
    default:
      return refused(`unknown pattern letter: ${c}`);
  }
}

/** The values a printer reads from a zoned date-time. */
function fieldValue(z: Zoned, field: Field | WeekField): number {
  const d = new Date(z.local);
  const year = d.getUTCFullYear();
  const msOfDay = ((z.local % MS_DAY) + MS_DAY) % MS_DAY;
  const hour = d.getUTCHours();
  const epochDay = Math.floor(z.local / MS_DAY);
  switch (field) {
    case 'year':
      return year;
    case 'yearOfEra':
      return year >= 1 ? year : 1 - year;
    case 'month':
      return d.getUTCMonth() + 1;
    case 'day':
      return d.getUTCDate();
    case 'dayOfYear':
      return dayOfYear(d);
    case 'quarter':
      return Math.floor(d.getUTCMonth() / 3) + 1;
    case 'hour':
      return hour;
    case 'clockHour':
      return hour === 0 ? 24 : hour;
    case 'hourOfAmPm':
      return hour % 12;
    case 'clockHourOfAmPm':
      return hour % 12 === 0 ? 12 : hour % 12;
    case 'minute':
      return d.getUTCMinutes();
    case 'second':
      return d.getUTCSeconds();
    case 'nano':
      return d.getUTCMilliseconds() * 1_000_000;
    case 'milliOfDay':
      return msOfDay;
    case 'nanoOfDay':
      return msOfDay * 1_000_000;
    case 'mjd':
      return epochDay + 40_587;
    default:
      return weekValue(d, field);
  }
}

function dayOfYear(d: Date): number {
  const jan1 = new Date(0);
  jan1.setUTCFullYear(d.getUTCFullYear(), 0, 1);
  const day = new Date(0);
  day.setUTCFullYear(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return Math.round((day.getTime() - jan1.getTime()) / MS_DAY) + 1;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

// Week fields as java.time's WeekFields computes them, with the week the engines' pattern formatters use
// (Locale.ROOT): it starts on Sunday, and the first week of a year or month is the one holding its first
// day (tested: <x-{now{YYYY.ww.e}}> on OpenSearch 2 and 3 and Elasticsearch 9).
const FIRST_DAY = 7; // ISO day number of Sunday
const MIN_DAYS = 1;

function weekValue(d: Date, field: WeekField): number {
  const isoDow = d.getUTCDay() === 0 ? 7 : d.getUTCDay();
  const dow = floorMod(isoDow - FIRST_DAY, 7) + 1;
  if (field === 'dayOfWeek') return dow;
  if (field === 'weekOfMonth') {
    const dom = d.getUTCDate();
    return computeWeek(startOfWeekOffset(dom, dow), dom);
  }
  const year = d.getUTCFullYear();
  const doy = dayOfYear(d);
  const offset = startOfWeekOffset(doy, dow);
  const week = computeWeek(offset, doy);
  const yearLength = isLeap(year) ? 366 : 365;
  const newYearWeek = computeWeek(offset, yearLength + MIN_DAYS);
  if (field === 'weekBasedYear') {
    if (week === 0) return year - 1;
    return week >= newYearWeek ? year + 1 : year;
  }
  if (week === 0) {
    const back = new Date(d.getTime());
    back.setUTCDate(back.getUTCDate() - doy);
    return weekValue(back, 'weekOfWeekBasedYear');
  }
  return week > 50 && week >= newYearWeek ? week - newYearWeek + 1 : week;
}

function startOfWeekOffset(day: number, dow: number): number {
  const weekStart = floorMod(day - dow, 7);
  return weekStart + 1 > MIN_DAYS ? 7 - weekStart : -weekStart;
}

function computeWeek(offset: number, day: number): number {
  return Math.floor((7 + offset + (day - 1)) / 7);
}

function floorMod(a: number, b: number): number {
  return ((a % b) + b) % b;
}

function print(format: Format, instantMs: number, zone: Zone): string {
  const z = ofInstant(instantMs, zone);
  return format.printers.map((p) => printOne(p, z, instantMs)).join('');
}

function printOne(printer: Printer, z: Zoned, instantMs: number): string {
  switch (printer.kind) {
    case 'literal':
      return printer.text;
    case 'optional':
      return printer.printers.map((p) => printOne(p, z, instantMs)).join('');
    case 'pad': {
      const text = printOne(printer.printer, z, instantMs);
      if (text.length > printer.width) refused(`cannot print as output of ${text.length} characters exceeds pad width of ${printer.width}`);
      return text.padStart(printer.width, ' ');
    }
    case 'number':
      return printNumber(fieldValue(z, printer.field), printer.min, printer.max, printer.sign);
    case 'reduced':
      return String(Math.abs(fieldValue(z, printer.field) % 100)).padStart(2, '0');
    case 'fraction':
      return String(fieldValue(z, 'nano')).padStart(9, '0').slice(0, printer.width);
    case 'offset':
      return printOffset(z.offset, printer.type, printer.zero);
    case 'epoch': {
      if (printer.unit === 'millis') return String(instantMs);
      const seconds = Math.floor(instantMs / 1000);
      const ms = instantMs - seconds * 1000;
      return ms === 0 ? String(seconds) : `${seconds}.${String(ms).padStart(3, '0').replace(/0+$/, '')}`;
    }
  }
}

function printNumber(value: number, min: number, max: number, sign: Sign): string {
  const digits = String(Math.abs(value));
  if (digits.length > max) refused(`a value ${value} exceeds the maximum print width of ${max}`);
  let prefix = '';
  if (value < 0) {
    if (sign === 'notNegative') refused(`a value ${value} cannot be negative according to the pattern`);
    prefix = '-';
  } else if (sign === 'exceedsPad' && min < 19 && value >= 10 ** min) prefix = '+';
  return prefix + digits.padStart(min, '0');
}

function printOffset(total: number, type: number, zero: string): string {
  if (total === 0) return zero;
  const abs = Math.abs(total);
  const [hours, minutes, seconds] = [Math.floor(abs / 3600) % 100, Math.floor(abs / 60) % 60, abs % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  const colon = type % 2 === 0 ? ':' : '';
  let out = (total < 0 ? '-' : '+') + two(hours);
  if (type >= 3 || (type >= 1 && minutes > 0)) {
    out += colon + two(minutes);
    if (type >= 7 || (type >= 5 && seconds > 0)) out += colon + two(seconds);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// A fixed date before `||`, read in the format: formats of plain numbers (u y M d H m s), quoted text and
// optional sections, each number followed by text or the end; the fields it leaves out are the start of
// their unit, as the engines fill them.

type DateToken = { letter: string; count: number } | { literal: string } | { optional: DateToken[] };

function parseDate(text: string, format: Format): number {
  const pattern = format.pattern;
  const cannot = () => unsupported(`a fixed date [${text}] in the format [${pattern ?? 'a named one'}]`);
  if (pattern === undefined) return cannot();
  const tokens = dateTokens(pattern, cannot);
  const flat: DateToken[] = [];
  const flatten = (list: DateToken[]) => {
    for (const t of list) 'optional' in t ? flatten(t.optional) : flat.push(t);
  };
  flatten(tokens);
  const letters = flat.filter((t): t is { letter: string; count: number } => 'letter' in t);
  for (let i = 0; i < flat.length; i++) {
    const [t, next] = [flat[i], flat[i + 1]];
    if ('letter' in t && next && ('letter' in next || /[0-9]/.test((next as { literal: string }).literal[0] ?? ''))) cannot();
  }
  const has = (c: string) => letters.some((t) => t.letter === c);
  if (new Set(letters.map((t) => (t.letter === 'u' ? 'y' : t.letter))).size !== letters.length) cannot();
  if (!has('y') && !has('u')) cannot();
  if ((has('d') && !has('M')) || (has('m') && !has('H')) || (has('s') && !has('m'))) cannot();
  const fail = () => refused(`failed to parse date field [${text}] with format [${pattern}]`);
  const values: Record<string, number> = { y: 1970, M: 1, d: 1, H: 0, m: 0, s: 0 };
  const parse = (list: DateToken[], at: number): number => {
    for (const token of list) {
      if (at < 0) return at;
      if ('optional' in token) {
        const saved = { ...values };
        const after = parse(token.optional, at);
        if (after >= 0) at = after;
        else Object.assign(values, saved);
      } else if ('literal' in token) {
        at = text.startsWith(token.literal, at) ? at + token.literal.length : -1;
      } else {
        const digits = /^[0-9]*/.exec(text.slice(at))?.[0] ?? '';
        const year = token.letter === 'u' || token.letter === 'y';
        if (year && token.count !== 4 && token.count !== 1) cannot();
        if (digits.length > 4) cannot();
        if (digits.length === 0 || (token.count >= 2 && digits.length !== token.count)) return -1;
        if (token.count === 1 && !year && digits.length > 2) cannot();
        const value = Number(digits);
        if (token.letter === 'y' && value === 0) return -1;
        values[year ? 'y' : token.letter] = value;
        at += digits.length;
      }
    }
    return at;
  };
  if (parse(tokens, 0) !== text.length) fail();
  const { y, M, d, H, m, s } = values;
  if (M < 1 || M > 12 || d < 1 || d > daysInMonth(y, M - 1) || H > 23 || m > 59 || s > 59) fail();
  const local = new Date(0);
  local.setUTCFullYear(y, M - 1, d);
  local.setUTCHours(H, m, s, 0);
  return local.getTime();
}

/** A pattern as the tokens a fixed date is read by (the letters the reader knows, quoted text, [...]). */
function dateTokens(pattern: string, cannot: () => never): DateToken[] {
  const root: DateToken[] = [];
  const stack = [root];
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i];
    const out = stack[stack.length - 1];
    if (isLetter(c)) {
      let count = 1;
      while (pattern[i + count] === c) count++;
      if (!'uyMdHms'.includes(c)) cannot();
      out.push({ letter: c, count });
      i += count;
    } else if (c === "'") {
      let end = i + 1;
      for (; end < pattern.length; end++) {
        if (pattern[end] === "'") {
          if (pattern[end + 1] === "'") end++;
          else break;
        }
      }
      const quoted = pattern.slice(i + 1, end);
      out.push({ literal: quoted === '' ? "'" : quoted.replaceAll("''", "'") });
      i = end + 1;
    } else if (c === '[') {
      const optional: DateToken[] = [];
      out.push({ optional });
      stack.push(optional);
      i++;
    } else if (c === ']') {
      stack.pop();
      i++;
    } else {
      out.push({ literal: c });
      i++;
    }
  }
  return root;
}

/** The engines' format when an expression gives none (built last: it needs the tables above). */
const DEFAULT_FORMAT: Format = { printers: compilePattern('uuuu.MM.dd'), pattern: 'uuuu.MM.dd' };
