// Reading what the user hands us: all of standard input, and bytes that may not be UTF-8.
import { escaped } from './terminal-text.js';

/** All of standard input, as bytes: it may not be UTF-8, so it is decoded where the encoding is known. */
export async function readAllStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export { decodeText } from '../text/decode.js';

/** Says on stderr that the input was not UTF-8 and how many sequences were replaced (nothing when none). */
export function warnNotUtf8(file: string | undefined, replaced: number): void {
  if (replaced > 0) {
    process.stderr.write(escaped`near-dup: ${file ?? 'standard input'} is not valid UTF-8: ${replaced} invalid byte sequence(s) read as U+FFFD\n`);
  }
}
