// UTF-8 encoding into a reused buffer: the token hashes run once per token, and allocating a fresh
// Uint8Array per token (TextEncoder.encode) costs more than hashing it.

const encoder = new TextEncoder();
let scratch = new Uint8Array(1024);

/**
 * Encodes `text` as UTF-8 into a shared scratch buffer and returns the number of bytes written.
 * The bytes stay valid until the next call. Lone surrogates become U+FFFD, as TextEncoder does.
 */
export function encodeUtf8(text: string): number {
  const n = text.length;
  if (scratch.length < n * 3) scratch = new Uint8Array(Math.max(n * 3, scratch.length * 2));
  const out = scratch;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return encoder.encodeInto(text, out).written;
    out[i] = c;
  }
  return n;
}

/** The scratch buffer that {@link encodeUtf8} wrote into. */
export function utf8Scratch(): Uint8Array {
  return scratch;
}
