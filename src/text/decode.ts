// Bytes that may not be UTF-8: decoded with replacement, and the replacements counted so the caller can say so.

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
