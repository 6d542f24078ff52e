// What every request handler of the proxy shares: the cluster, the signing threads, the settings, the
// counters.
import type { Upstream } from '../engine/forward.js';
import type { SignerOptions } from '../signature.js';
import type { SignPool } from '../jobs/sign-pool.js';
import type { SignSourcesOptions } from '../jobs/sign-sources.js';
import type { IndexFieldsGuard } from './index-fields.js';
import type { IndexMatcher } from './index-pattern.js';
import type { ProxyStats } from './stats.js';

export type OnError = 'reject' | 'pass';

export interface ProxyContext {
  upstream: Upstream;
  pool: SignPool;
  matches: IndexMatcher;
  signer: SignerOptions;
  sources: SignSourcesOptions;
  onError: OnError;
  /** A client's bulk body goes upstream in parts of about this many bytes (signing makes documents larger). */
  maxUpstreamBytes: number;
  stats: ProxyStats;
  fields: IndexFieldsGuard;
}

/** The engines' error answer, so clients raise it as they raise the engine's own. */
export function errorBody(status: number, type: string, reason: string): string {
  return JSON.stringify({ error: { root_cause: [{ type, reason }], type, reason }, status });
}
