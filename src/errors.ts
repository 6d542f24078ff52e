// near-dup's own errors, one class per way a caller answers them (fix the call, or fix the world), so that
// the library's callers and the code itself tell them apart with `instanceof`. A message that names an
// option is kept as a function of how options are named: the library names the option key a caller wrote
// (`minSimilarity`), the command line the flag a user typed (`--min-similarity`, cli/option-flags.ts).

/** Says the same thing whatever an option is called: `option(key)` is how the key is named in it. */
export type OptionMessage = (option: (key: string) => string) => string;

/** The library's way to name an option in a message: its key, as a caller writes it. */
const byKey = (key: string): string => key;

/** The option keys a message names, in the order it names them. */
function keysNamedIn(message: OptionMessage): string[] {
  const keys: string[] = [];
  message((key) => {
    keys.push(key);
    return key;
  });
  return keys;
}

/** An error of near-dup's own: its message may name options, by key here and by flag on the command line. */
export class NearDupError extends Error {
  override name = 'NearDupError';
  /** The option keys the message names (`minSimilarity`, `bulk.maxBytes`), none when it names none. */
  readonly options: readonly string[];
  readonly #message: OptionMessage | undefined;

  constructor(message: string | OptionMessage, options?: ErrorOptions) {
    super(typeof message === 'string' ? message : message(byKey), options);
    this.#message = typeof message === 'string' ? undefined : message;
    this.options = typeof message === 'string' ? [] : keysNamedIn(message);
  }

  /** The message with every option it names named by `name` (the command line passes its flags). */
  messageNaming(name: (key: string) => string): string {
    return this.#message ? this.#message(name) : this.message;
  }
}

/** A mistake in how a function or command was called (an option out of range, two that conflict): the CLI prints one line, exit code 2. */
export class UsageError extends NearDupError {
  override name = 'UsageError';
}

/** A failure the caller can act on (unreachable cluster, missing index, bad file): the CLI prints one line, exit code 1. */
export class UserError extends NearDupError {
  override name = 'UserError';
}

/** Checks options that must be whole numbers of at least a minimum; the message names the option key. */
export function requireWholeNumbers(values: ReadonlyArray<readonly [key: string, value: number | undefined, min: number]>): void {
  for (const [key, value, min] of values) {
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < min) throw new UsageError((o) => `${o(key)} must be a whole number of at least ${min}, got ${value}`);
  }
}

/** The bulk writing options every writing job takes (`bulk` of annotateIndex, ingestStream and dedupIndex). */
export interface BulkOptions {
  /** Most bytes of one bulk request's body (default 5 MB; at least 1024). */
  maxBytes?: number;
  /** Most operations in one bulk request (default 1,000). */
  maxOperations?: number;
  /** Bulk requests in flight at once, fixed (default: planned from the cluster's data nodes and shards, lowered on 429s). */
  concurrency?: number;
}

/** Checks the bulk writing options every writing job takes. */
export function checkBulkOptions(bulk: BulkOptions | undefined): void {
  requireWholeNumbers([['bulk.maxOperations', bulk?.maxOperations, 1], ['bulk.maxBytes', bulk?.maxBytes, 1024], ['bulk.concurrency', bulk?.concurrency, 1]]);
}
