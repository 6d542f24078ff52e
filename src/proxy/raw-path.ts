// A request's path as the client sent it, read the way the engines read it: not normalized (`.` and `..`
// are names to them, not steps), each segment percent-decoded as UTF-8 with a lenient hand. The proxy must
// read a path exactly as the engine will, or a write could reach an index it did not see.

/** Percent-decoding as the engines do it: the bytes as UTF-8, a byte that is not UTF-8 read as U+FFFD, a stray % kept. */
export function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    const hex = segment[i] === '%' ? segment.slice(i + 1, i + 3) : '';
    if (/^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(segment[i]));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The path of a request as the client sent it (the path of an absolute-form target), without the query. */
export function rawPath(target: string): string {
  const path = target.split('?')[0];
  if (path.startsWith('/')) return path;
  try {
    return new URL(path).pathname;
  } catch {
    return path;
  }
}
