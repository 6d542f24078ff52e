// Unicode repair, the part of ftfy's work that matters for near-duplicate detection: text that was
// UTF-8 but got decoded as Windows-1252 or Latin-1 ("cafÃ©" for "café", "â€™" for "’") is decoded
// again; control characters, NUL bytes, lone surrogates and byte-order marks are dropped; the result is
// NFC, so composed and decomposed accents compare equal.

// Windows-1252 bytes 0x80–0x9F that map to characters outside Latin-1.
const CP1252_HIGH: Record<number, number> = {
  0x20ac: 0x80, 0x201a: 0x82, 0x0192: 0x83, 0x201e: 0x84, 0x2026: 0x85, 0x2020: 0x86, 0x2021: 0x87,
  0x02c6: 0x88, 0x2030: 0x89, 0x0160: 0x8a, 0x2039: 0x8b, 0x0152: 0x8c, 0x017d: 0x8e, 0x2018: 0x91,
  0x2019: 0x92, 0x201c: 0x93, 0x201d: 0x94, 0x2022: 0x95, 0x2013: 0x96, 0x2014: 0x97, 0x02dc: 0x98,
  0x2122: 0x99, 0x0161: 0x9a, 0x203a: 0x9b, 0x0153: 0x9c, 0x017e: 0x9e, 0x0178: 0x9f,
};

const CONTINUATION = '[\\u0080-\\u00bf\\u20ac\\u201a\\u0192\\u201e\\u2026\\u2020\\u2021\\u02c6\\u2030\\u0160\\u2039\\u0152\\u017d\\u2018\\u2019\\u201c\\u201d\\u2022\\u2013\\u2014\\u02dc\\u2122\\u0161\\u203a\\u0153\\u017e\\u0178]';
// A UTF-8 lead byte (as its Latin-1 character) followed by the right number of continuation bytes.
const MOJIBAKE = new RegExp(
  `[\\u00c2-\\u00df]${CONTINUATION}|[\\u00e0-\\u00ef]${CONTINUATION}{2}|[\\u00f0-\\u00f4]${CONTINUATION}{3}`,
  'g',
);
const utf8 = new TextDecoder('utf-8', { fatal: true });

function asByte(ch: string): number {
  const code = ch.charCodeAt(0);
  return code <= 0xff ? code : (CP1252_HIGH[code] ?? -1);
}

/** Re-decodes runs that are UTF-8 bytes shown as Windows-1252/Latin-1 characters; leaves the rest. */
export function fixMojibake(text: string): string {
  if (!/[\u00c2-\u00f4]/.test(text)) return text;
  return text.replace(MOJIBAKE, (run) => {
    const bytes = new Uint8Array(run.length);
    for (let i = 0; i < run.length; i++) {
      const b = asByte(run[i]);
      if (b < 0) return run;
      bytes[i] = b;
    }
    try {
      return utf8.decode(bytes);
    } catch {
      return run;
    }
  });
}

// C0/C1 controls except tab, line feed, carriage return and form feed; byte-order marks; lone surrogates.
const JUNK = /[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// Every character JUNK can match, as one class: a scan several times faster than JUNK's, which most texts
// pass (surrogates come in valid pairs far more often than alone).
const MAYBE_JUNK = /[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f\ufeff\ud800-\udfff]/;

/** Repairs what can be repaired and drops characters that carry no text. */
export function repairUnicode(text: string): string {
  return normalizeBounded(fixMojibake(MAYBE_JUNK.test(text) ? text.replace(JUNK, '') : text), 'NFC');
}

// Normalization puts the combining marks that follow a character in their canonical order, and ICU (behind
// String.prototype.normalize) does it by insertion: a run of n marks out of order costs n^2 (80,000 marks
// took 5 s). Text has a handful in a row at most; Unicode's Stream-Safe Text Format (UAX #15) bounds a run at
// 30. Marks here: \p{M}, and the two half-width sound marks that NFKC turns into marks.
const MAX_MARK_RUN = 30;
const ASTRAL_MARK = /^\p{M}$/u;

/**
 * text.normalize(form), in time linear in the text: a run of more than 30 marks is normalized in pieces of
 * 30 (as if the grapheme joiner of the Stream-Safe Text Format stood between them, without the character).
 * A text without such a run, which is every text but crafted ones, is normalized as it is.
 */
export function normalizeBounded(text: string, form: 'NFC' | 'NFKC'): string {
  if (!hasLongMarkRun(text)) return text.normalize(form);
  const table = markTable();
  const out: string[] = [];
  let from = 0;
  let run = 0;
  for (let i = 0; i < text.length; ) {
    const mark = markAt(text, i, table);
    if (mark === 0) {
      run = 0;
      i++;
      continue;
    }
    if (run === MAX_MARK_RUN) {
      out.push(text.slice(from, i).normalize(form));
      from = i;
      run = 0;
    }
    run++;
    i += mark;
  }
  out.push(text.slice(from).normalize(form));
  return out.join('');
}

let markUnits: Uint8Array | undefined;

/** 1 for each UTF-16 unit that may be part of a mark: the marks of the BMP, and surrogates (an astral mark is two). */
function markTable(): Uint8Array {
  if (markUnits === undefined) {
    const units = new Uint16Array(0x10000);
    for (let c = 0; c < 0x10000; c++) units[c] = c >= 0xd800 && c < 0xe000 ? 0x20 : c;
    const table = new Uint8Array(0x10000);
    for (const run of Buffer.from(units.buffer).toString('utf16le').matchAll(/[\p{M}\uff9e\uff9f]+/gu)) table.fill(1, run.index, run.index + run[0].length);
    markUnits = table.fill(1, 0xd800, 0xe000);
  }
  return markUnits;
}

/** The length in units of the mark at i (0: not a mark). */
function markAt(text: string, i: number, table: Uint8Array): number {
  const c = text.charCodeAt(i);
  if (table[c] === 0) return 0;
  if (c < 0xd800 || c >= 0xe000) return 1;
  const cp = text.codePointAt(i)!;
  return cp > 0xffff && ASTRAL_MARK.test(String.fromCodePoint(cp)) ? 2 : 0;
}

/**
 * Whether the text has a run of more than 30 marks. Looking at every character would cost more than the
 * normalization itself (a pattern for it, several times more); such a run holds one of every 31st unit, so
 * only those are looked at (in a table), and the run around one that may be a mark is measured.
 */
function hasLongMarkRun(text: string): boolean {
  const n = text.length;
  if (n <= MAX_MARK_RUN) return false;
  for (let i = MAX_MARK_RUN; i < n; ) {
    const c = text.charCodeAt(i);
    if (c < 0x300) {
      i += MAX_MARK_RUN + 1; // no mark comes before U+0300
      continue;
    }
    const table = markTable();
    if (table[c] === 0) {
      i += MAX_MARK_RUN + 1;
      continue;
    }
    // Back to the last unit that cannot be part of a mark (the sample before was one), then forward through
    // the run, counting marks in a row: each unit is read once.
    let at = i;
    while (at > 0 && table[text.charCodeAt(at - 1)] === 1) at--;
    let run = 0;
    while (at < n && table[text.charCodeAt(at)] === 1) {
      const mark = markAt(text, at, table);
      if (mark === 0) {
        run = 0;
        at++;
      } else {
        if (++run > MAX_MARK_RUN) return true;
        at += mark;
      }
    }
    i = at + MAX_MARK_RUN;
  }
  return false;
}
