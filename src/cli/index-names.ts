// "index X does not exist" with the names that do exist and look like it: a typo (`near-dup-demo-licences`)
// or a part of the name (`licenses`) finds the index meant.
import { connect } from '../engine/client.js';
import type { ConnectionOptions } from '../engine/connection.js';

/** Edit distance of two short strings (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** The names among `names` that look like `wanted`, closest first (at most 3). */
export function similarNames(wanted: string, names: readonly string[]): string[] {
  const w = wanted.toLowerCase();
  const scored = names
    .filter((n) => n !== wanted && !n.startsWith('.'))
    .map((n) => {
      const l = n.toLowerCase();
      const distance = editDistance(w, l);
      const part = w.length >= 4 && (l.includes(w) || w.includes(l));
      return { n, score: part ? Math.min(distance, 1.5) : distance };
    })
    .filter(({ n, score }) => score <= Math.max(2, Math.floor(Math.min(wanted.length, n.length) / 4)))
    .sort((a, b) => a.score - b.score || (a.n < b.n ? -1 : 1));
  return scored.slice(0, 3).map(({ n }) => n);
}

const MISSING = /^index "([^"]+)" does not exist on /;

/**
 * The message of a failure with the indices of similar names appended, when it says an index does not
 * exist and the cluster holds some; the message as it was otherwise (or when the cluster cannot be asked).
 */
export async function withSimilarIndexNames(message: string, connection: ConnectionOptions | undefined): Promise<string> {
  const missing = MISSING.exec(message)?.[1];
  if (!missing || !connection) return message;
  try {
    const client = await connect({ ...connection, maxRetries: 0 });
    try {
      const [indices, aliases] = await Promise.all([
        client.request<Array<{ index: string }>>('GET', '/_cat/indices', undefined, { format: 'json', h: 'index' }),
        client.request<Array<{ alias: string }>>('GET', '/_cat/aliases', undefined, { format: 'json', h: 'alias' }),
      ]);
      const names = [...new Set([...indices.map((i) => i.index), ...aliases.map((a) => a.alias)])];
      const like = similarNames(missing, names);
      if (like.length === 0) return message;
      return `${message}; ${like.length > 1 ? 'indices of similar names exist' : 'an index of a similar name exists'}: ${like.map((n) => `"${n}"`).join(', ')}`;
    } finally {
      await client.close();
    }
  } catch {
    return message;
  }
}
