// Bytes that may not be UTF-8: decoded with replacement, and the replacements counted so the caller can say so.
import { isAscii } from 'node:buffer';

const strict = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8');

/** UTF-8 text; invalid sequences become U+FFFD and are counted so the caller can say so. */
export function decodeText(bytes: Uint8Array): { text: string; replaced: number } {
  try {
    return { text: strict.decode(bytes), replaced: 0 };
  } catch {
    const text = lenient.decode(bytes);
    return { text, replaced: text.match(/\ufffd/g)?.length ?? 0 };
  }
}

const NEWLINE = 0x0a;
const encoder = new TextEncoder();

/**
 * decodeText of each line of UTF-8 bytes (split at line feeds; a final empty line is dropped), one line at
 * a time: a line that is all ASCII becomes a one-byte string even when another line of the batch is not,
 * and every later step on it (JSON, regular expressions, the normalizer) runs faster on that.
 */
export function decodeLines(bytes: Uint8Array): { lines: string[]; replaced: number } {
  const lines: string[] = [];
  let replaced = 0;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let start = 0; start < bytes.length; ) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end === -1) end = bytes.length;
    const line = buffer.subarray(start, end);
    if (isAscii(line)) lines.push(buffer.toString('latin1', start, end));
    else {
      const decoded = decodeText(line);
      lines.push(decoded.text);
      replaced += decoded.replaced;
    }
    start = end + 1;
  }
  return { lines, replaced };
}

/** Where a line that is not valid UTF-8 goes wrong: the byte offset of its first invalid sequence, and that byte. */
export interface InvalidUtf8 {
  offset: number;
  byte: number;
}

function firstInvalid(line: Uint8Array): InvalidUtf8 {
  // The lenient decoder gives valid sequences back as they were, so the UTF-8 length of the text before a
  // U+FFFD is its byte offset; a U+FFFD that was in the input (EF BF BD) is passed over.
  const text = lenient.decode(line);
  let offset = 0;
  let from = 0;
  for (let at = text.indexOf('\ufffd'); at !== -1; at = text.indexOf('\ufffd', at + 1)) {
    offset += encoder.encode(text.slice(from, at)).length;
    from = at + 1;
    if (line[offset] === 0xef && line[offset + 1] === 0xbf && line[offset + 2] === 0xbd) {
      offset += 3;
      continue;
    }
    return { offset, byte: line[offset] };
  }
  return { offset: line.length, byte: line[line.length - 1] };
}

/**
 * The lines of UTF-8 bytes, split at line feeds (a final empty line is dropped). A line that is not valid
 * UTF-8 is not decoded: where it goes wrong is given instead, so the caller can refuse that line alone.
 */
export function utf8Lines(bytes: Uint8Array): Array<string | InvalidUtf8> {
  let lines: Array<string | InvalidUtf8>;
  try {
    lines = strict.decode(bytes).split('\n');
  } catch {
    lines = [];
    for (let start = 0; start <= bytes.length; ) {
      let end = bytes.indexOf(NEWLINE, start);
      if (end === -1) end = bytes.length;
      const line = bytes.subarray(start, end);
      try {
        lines.push(strict.decode(line));
      } catch {
        lines.push(firstInvalid(line));
      }
      start = end + 1;
    }
  }
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
