/** A mistake in how the command was called: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the user can act on (unreachable cluster, missing index, bad file): one line, exit code 1. */
export class UserError extends Error {
  override name = 'UserError';
}
