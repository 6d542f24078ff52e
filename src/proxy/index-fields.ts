// Before the proxy first writes signed documents to an index, the index gets the near-dup fields (by
// `near-dup init`'s own initIndex): left to dynamic mapping, the MinHash would become a text field and the band
// keys analyzed text. For a data stream, its template is composed of the fields too, so that every backing
// index a rollover makes has them before the first document lands there. The requests go with the
// client's own credentials. An index the client may not change (no manage privilege) is said once on
// stderr with the fix, and documents still go.
import type { IndexMappings } from '../engine/client.js';
import { redactSecret } from '../engine/url.js';
import { headerValue, type Upstream, upstreamJson } from './forward.js';
import { initIndex, type MappingAccess } from '../indices/init.js';
import type { KeyLists } from '../stored/write.js';

/** How long an index is taken to have the fields before it is checked again (it may be deleted and made anew). */
const RECHECK_MS = 30_000;

/**
 * Gives each index the near-dup fields before the proxy first writes signed documents to it, once per index in a
 * while.
 */
export class IndexFieldsGuard {
  private readonly checked = new Map<string, { at: number; done: Promise<KeyLists> }>();
  private readonly warned = new Set<string>();
  /** Indices the proxy could not give the fields. */
  failures = 0;

  constructor(
    private readonly upstream: Upstream,
    private readonly prefix: string,
    private readonly warn: (line: string) => void,
  ) {}

  /**
   * Resolves when `index` has the fields, with how it takes the key lists; or, when giving them failed (said
   * once), with lists, which any mapping reads. Never rejects.
   */
  ensure(index: string, clientHeaders: readonly string[]): Promise<KeyLists> {
    const now = Date.now();
    const known = this.checked.get(index);
    if (known && now - known.at < RECHECK_MS) return known.done;
    const authorization = headerValue(clientHeaders, 'authorization');
    const headers = authorization ? ['authorization', authorization] : [];
    const done = this.give(index, headers).catch((err: Error): KeyLists => {
      this.failures++;
      if (!this.warned.has(index)) {
        this.warned.add(index);
        this.warn(`could not give index "${index}" the near-dup fields (${redactSecret(err.message, authorization)}); documents are signed anyway. Run near-dup init --index ${index} as a user who may change its mapping, or near-dup init --template 'PATTERN' (the indices' pattern) so that new indices get them`);
      }
      return 'lists';
    });
    this.checked.set(index, { at: now, done });
    return done;
  }

  private async give(index: string, headers: string[]): Promise<KeyLists> {
    return (await initIndex(mappingAccess(this.upstream, headers), index, this.prefix)).keyLists;
  }
}

/** The mapping requests initIndex makes, sent upstream with the client's own credentials. */
function mappingAccess(upstream: Upstream, headers: string[]): MappingAccess {
  const json = (method: string, path: string, body?: unknown) => upstreamJson(upstream, method, path, body, headers);
  const path = (index: string) => `/${encodeURIComponent(index)}`;
  return {
    url: upstream.url.origin,
    getMapping: async (index) => (await json('GET', `${path(index)}/_mapping`)) as IndexMappings,
    createIndex: async (index, body) => {
      await json('PUT', path(index), body);
    },
    putMapping: async (index, body) => {
      await json('PUT', `${path(index)}/_mapping`, body);
    },
    request: async <T>(method: string, path: string, body?: unknown) => (await json(method, path, body)) as T,
    describe: (err) => err as Error,
  };
}
