// The one place where the library's option keys become the command line's flags. Library errors name the
// key a caller wrote (`minSimilarity`, `bulk.maxBytes`: errors.ts); a user of the CLI typed a flag, so the
// CLI names the flag instead. Most flags are the key in kebab case; the exceptions are listed.
import { NearDupError } from '../errors.js';

/** Keys whose flag is not the kebab case of the key's last part. */
const FLAG_OF_KEY: Readonly<Record<string, string>> = {
  fields: '--field',
  'bulk.maxOperations': '--bulk-size',
  'bulk.maxBytes': '--bulk-bytes',
  'bulk.concurrency': '--concurrency',
  'slice.id': '--slice',
  'slice.max': '--slices',
  'template.share': '--template-share',
  'template.sample': '--template-sample',
  checkpointFile: '--checkpoint',
  pairsFile: '--pairs',
  collectMatches: '--format text',
  idField: '--id-field',
};

/** `maxCachedSignatures` -> `max-cached-signatures`. */
function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The flag a user types for the library's option `key` (`minSimilarity` -> `--min-similarity`). */
export function flagOf(key: string): string {
  return FLAG_OF_KEY[key] ?? `--${kebab(key.slice(key.lastIndexOf('.') + 1))}`;
}

/** An error's message as the command line says it: near-dup's own errors name flags, any other is as it is. */
export function cliMessage(err: unknown): string {
  if (err instanceof NearDupError) return err.messageNaming(flagOf);
  return err instanceof Error ? err.message : String(err);
}
