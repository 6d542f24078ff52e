// Which `_source` a scan asks for: the fields a job needs (source filtering), or the whole source. The
// engine hands out a whole source as the bytes it stored, but to filter one it parses it and writes a new
// one: a scan of 300,000 documents of two kilobytes cost it 5.2 CPU seconds filtered to the text and the
// signature, 2.2 whole. Where the needed fields are most of each source, the whole costs the network and
// the client little more and the engine less; where other fields are large (vectors, attachments), the
// filter is kept.
import { valueAt } from '../annotation.js';
import type { EngineClient } from '../engine/client.js';

/** The whole source is read when the needed fields are at least this share of its bytes. */
export const WHOLE_SOURCE_SHARE = 0.5;
/** Documents looked at to decide. */
const SAMPLE = 20;

/** `true` (the whole source) or `needed` (filtered to those fields), from a sample of the documents the scan will read. */
export async function sourceToRead(client: Pick<EngineClient, 'search'>, index: string, query: Record<string, unknown>, needed: readonly string[]): Promise<true | string[]> {
  const page = await client.search(index, { size: SAMPLE, query, _source: true, track_total_hits: false, sort: ['_doc'] });
  return mostlyNeeded(page.hits.hits.map((hit) => hit._source), needed) ? true : [...needed];
}

/** Whether the needed fields are at least WHOLE_SOURCE_SHARE of the sources' bytes (false for none). */
export function mostlyNeeded(sources: ReadonlyArray<Record<string, unknown> | undefined>, needed: readonly string[]): boolean {
  let whole = 0;
  let wanted = 0;
  for (const source of sources) {
    if (source === undefined) continue;
    whole += JSON.stringify(source).length;
    wanted += JSON.stringify(needed.map((path) => valueAt(source, path))).length;
  }
  return whole > 0 && wanted >= WHOLE_SOURCE_SHARE * whole;
}
