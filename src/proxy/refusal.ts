// The proxy's own refusals of a request, apart from the context they are answered in (which needs the
// modules that refuse).
/** The error type of what went wrong in the proxy itself (the cluster unreachable, a body too large or too slow). */
export const PROXY_ERROR = 'near_dup_proxy_exception';

/** A request the proxy answers itself with an error (the engines' shape), before or while reading it. */
export class ProxyRefusal extends Error {
  override name = 'ProxyRefusal';
  constructor(
    readonly status: number,
    readonly type: string,
    reason: string,
    /** Seconds, for a Retry-After header (a refusal for load). */
    readonly retryAfter?: number,
  ) {
    super(reason);
  }
}
