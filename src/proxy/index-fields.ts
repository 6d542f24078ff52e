// Before the proxy first writes signed documents to an index, the index gets the near-dup fields (as
// `near-dup init` gives them): left to dynamic mapping, the MinHash would become a text field and the band
// keys analyzed text. The requests go with the client's own credentials. An index the client may not
// change (no manage privilege, a data stream) is said once on stderr with the fix, and documents still go.
import { headerValue, readBody, type Upstream } from '../engine/forward.js';
import { createIndexBody, describeConflicts, planMapping, putMappingBody } from '../engine/mapping.js';

/** How long an index is taken to have the fields before it is checked again (it may be deleted and made anew). */
const RECHECK_MS = 30_000;

interface JsonAnswer {
  status: number;
  body: unknown;
}

export class IndexFieldsGuard {
  private readonly checked = new Map<string, { at: number; done: Promise<void> }>();
  private readonly warned = new Set<string>();
  /** Indices the proxy could not give the fields. */
  failures = 0;

  constructor(
    private readonly upstream: Upstream,
    private readonly prefix: string,
    private readonly warn: (line: string) => void,
  ) {}

  /** Resolves when `index` has the fields, or when giving them failed (said once). Never rejects. */
  ensure(index: string, clientHeaders: readonly string[]): Promise<void> {
    const now = Date.now();
    const known = this.checked.get(index);
    if (known && now - known.at < RECHECK_MS) return known.done;
    const authorization = headerValue(clientHeaders, 'authorization');
    const headers = authorization ? ['authorization', authorization] : [];
    const done = this.give(index, headers).catch((err: Error) => {
      this.failures++;
      if (!this.warned.has(index)) {
        this.warned.add(index);
        this.warn(`could not give index "${index}" the near-dup fields (${err.message}); documents are signed anyway. Run near-dup init --index ${index}, or near-dup init --template --pattern '...' for new indices`);
      }
    });
    this.checked.set(index, { at: now, done });
    return done;
  }

  private async give(index: string, headers: string[]): Promise<void> {
    const path = `/${encodeURIComponent(index)}`;
    const current = await this.json('GET', `${path}/_mapping`, headers);
    if (current.status === 404) {
      const created = await this.json('PUT', path, headers, createIndexBody(this.prefix));
      if (created.status < 300) return;
      if (errorType(created.body) !== 'resource_already_exists_exception') throw new Error(describe(created));
      return this.give(index, headers);
    }
    if (current.status >= 300) throw new Error(describe(current));
    for (const [name, entry] of Object.entries(current.body as Record<string, { mappings?: unknown }>)) {
      const plan = planMapping(entry.mappings, this.prefix);
      if (plan.conflicts.length > 0) throw new Error(describeConflicts(name, plan.conflicts));
      if (plan.missing.length === 0) continue;
      const put = await this.json('PUT', `/${encodeURIComponent(name)}/_mapping`, headers, putMappingBody(this.prefix, plan.missing));
      if (put.status >= 300) throw new Error(describe(put));
    }
  }

  private async json(method: string, path: string, headers: string[], body?: unknown): Promise<JsonAnswer> {
    const bytes = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const sent = this.upstream.send(method, path, [...headers, 'content-type', 'application/json', 'accept', 'application/json'], bytes ?? new Uint8Array(0));
    const response = await sent.response;
    const text = (await readBody(response.body)).toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text for the message
    }
    return { status: response.status, body: parsed };
  }
}

function errorType(body: unknown): string | undefined {
  const error = (body as { error?: { type?: string } } | undefined)?.error;
  return typeof error === 'object' ? error?.type : undefined;
}

function describe(answer: JsonAnswer): string {
  const error = (answer.body as { error?: { type?: string; reason?: string } } | undefined)?.error;
  return typeof error === 'object' && error ? `${answer.status} ${error.type}: ${error.reason}` : `status ${answer.status}`;
}
