// What an index lacks before the explorer has clusters to show, and the command that makes it: a list of
// clusters that is empty because the index was never signed or never deduplicated says so, in the API and
// on the page, instead of an empty list (or the engine's refusal to sort on a field it never mapped).
import type { EngineClient } from '../engine/client.js';
import { commandLine, flagWords } from '../jobs/command-line.js';
import { DEFAULT_PREFIX, storedPath } from '../stored/layout.js';

/** What an index lacks before the explorer can show clusters, and the command that makes it. */
export interface MissingStep {
  missing: 'annotate' | 'dedup';
  /** The command that makes it, as a user types it (not `next`: that is the list's next page). */
  command: string;
  why: string;
}

/** The step the index lacks before it has clusters (annotate, then dedup); undefined when it has them. */
export async function missingStep(client: EngineClient, src: { index: string; fields: string[]; prefix: string }): Promise<MissingStep | undefined> {
  const prefix = src.prefix === DEFAULT_PREFIX ? [] : flagWords('--prefix', src.prefix);
  const signed = storedPath(src.prefix, 'params');
  if ((await client.count(src.index, { exists: { field: signed } })) === 0) {
    return {
      missing: 'annotate',
      command: commandLine(['near-dup', 'annotate', '--index', src.index, ...src.fields.flatMap((f) => flagWords('--field', f)), ...prefix]),
      why: `no document of "${src.index}" is signed (none has ${signed}): annotate it, then dedup it`,
    };
  }
  const clustered = storedPath(src.prefix, 'cluster_id');
  if ((await client.count(src.index, { exists: { field: clustered } })) === 0) {
    return {
      missing: 'dedup',
      command: commandLine(['near-dup', 'dedup', '--index', src.index, ...prefix]),
      why: `no document of "${src.index}" is in a cluster (none has ${clustered}): dedup has not run on it, or found no duplicates at its --min-similarity`,
    };
  }
  return undefined;
}
