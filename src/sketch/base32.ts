// Base32 of RFC 4648 (section 6: the alphabet A-Z 2-7), the form the simhash-doc scheme gives a SimHash
// as text. Written in capitals without padding: what Python's base64.b32encode gives, `=` stripped. Read
// in either case (the draft calls the form case-insensitive), with or without the padding.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 32; i++) {
  VALUES[ALPHABET.charCodeAt(i)] = i;
  VALUES[ALPHABET.toLowerCase().charCodeAt(i)] = i;
}

/** Characters of the unpadded encoding of n bytes. */
export function base32Length(bytes: number): number {
  return Math.ceil((bytes * 8) / 5);
}

/** Bytes as RFC 4648 base32 (upper case, no padding), the alphabet simhash-doc writes its SimHash in. */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0, bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xfff; // at most 4 bits wait from the byte before, so 12 are enough
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** A text that is not the base32 of `bytes` bytes, with what is wrong. */
export class Base32Error extends Error {
  override name = 'Base32Error';
}

/**
 * The `bytes` bytes a base32 text encodes. The padding, when there, must be the RFC's; the bits past the
 * last byte must be 0 (as every encoder writes them), so that one value has one text up to case.
 */
export function base32Decode(text: string, bytes: number): Uint8Array {
  const length = base32Length(bytes);
  const padded = Math.ceil(length / 8) * 8;
  const body = text.length === padded && text.slice(length) === '='.repeat(padded - length) ? text.slice(0, length) : text;
  if (body.length !== length) {
    throw new Base32Error(`"${short(text)}" is ${text.length} characters; the base32 of ${bytes} bytes is ${length} (${padded} with its = padding)`);
  }
  const out = new Uint8Array(bytes);
  let buffer = 0, bits = 0, n = 0;
  for (let i = 0; i < body.length; i++) {
    const code = body.charCodeAt(i);
    const value = code < 128 ? VALUES[code] : -1;
    if (value < 0) throw new Base32Error(`"${short(text)}" holds "${body[i]}", not a base32 character (A-Z, 2-7, either case)`);
    buffer = ((buffer << 5) | value) & 0x1fff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (buffer >>> bits) & 0xff;
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) throw new Base32Error(`"${short(text)}" has bits set past its last byte: not the base32 an encoder writes`);
  return out;
}

function short(text: string): string {
  return text.length > 24 ? `${text.slice(0, 24)}...` : text;
}
