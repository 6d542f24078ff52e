/** A mistake in how the command was called: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the user can act on (unreachable cluster, missing index, bad file): one line, exit code 1. */
export class UserError extends Error {
  override name = 'UserError';
}

/** Checks options that must be whole numbers of at least a minimum; the message names the command-line option. */
export function requireWholeNumbers(values: ReadonlyArray<readonly [option: string, value: number | undefined, min: number]>): void {
  for (const [name, value, min] of values) {
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < min) throw new UsageError(`--${name} must be a whole number of at least ${min}, got ${value}`);
  }
}

/** Checks the bulk writing options every writing job takes. */
export function checkBulkOptions(bulk: { maxBytes?: number; maxOperations?: number; concurrency?: number } | undefined): void {
  requireWholeNumbers([['bulk-size', bulk?.maxOperations, 1], ['bulk-bytes', bulk?.maxBytes, 1024], ['concurrency', bulk?.concurrency, 1]]);
}
