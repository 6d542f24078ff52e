// Whether this user may write to an index, asked of the engine before a job changes anything, in requests
// that change nothing: a bulk item that cannot succeed (an update of a document that does not exist; an
// index whose if_seq_no no document has) is refused for want of a privilege before the engine looks for the
// document, and otherwise answers 404 or 409; a refresh of the index, which the job makes after writing
// anyway. A refusal is an EngineResponseError whose `refusal` names the privilege.
import { randomBytes } from 'node:crypto';
import type { BulkResponseBody, HttpMethod } from './client.js';
import { EngineConnectionError, EngineResponseError } from './errors.js';
import { privilegeRefusal } from './refusal.js';

/** The part of the client the privilege probes need, so that index administration can probe through either client. */
export interface PrivilegeProbeAccess {
  readonly url: string;
  /** Amazon OpenSearch Serverless: no scroll to ask about (its scans use a point in time). */
  readonly info?: { serverless?: boolean };
  request<T = unknown>(method: HttpMethod, path: string, body?: unknown, query?: Record<string, string>): Promise<T>;
  bulkNdjson(ndjson: string): Promise<BulkResponseBody>;
  refresh(index: string): Promise<void>;
}

/** How the job writes: partial updates (annotate, dedup) or whole documents (ingest, annotate --keep-version). */
export type WriteAction = 'update' | 'index';

/** A write a job is about to make, checked for privilege before it starts rather than failing halfway. */
export interface WriteProbe {
  action: WriteAction;
  /** Also check that the index may be refreshed (the job refreshes after writing, to count what it wrote). */
  refresh: boolean;
}

/** An id no document has: the probe's item finds nothing, and so writes nothing. */
function probeId(): string {
  return `near-dup-privilege-check-${randomBytes(9).toString('base64url')}`;
}

/**
 * Refuses, before anything is written, a user who may not write `probe.action` to `index` (a concrete index:
 * the probe item must not be sent to an alias or a pattern) or refresh `name`.
 */
export async function requireWritePrivileges(client: PrivilegeProbeAccess, index: string, name: string, probe: WriteProbe): Promise<void> {
  await onlyRefusals(() => probeWrite(client, index, probe.action));
  // Serverless has no refresh to be refused (its refresh waits out the index's interval: not worth it here).
  if (probe.refresh && !client.info?.serverless) await onlyRefusals(() => client.refresh(name));
}

/**
 * Runs a check, passing on only a refusal (a missing privilege, refused credentials): any other failure (an
 * overloaded or unreachable cluster, a dropped answer) is left for the job's own requests to meet, with their
 * retries; a check must never fail a job that would have gone through.
 */
export async function onlyRefusals(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (err instanceof EngineResponseError && (err.refusal !== undefined || err.statusCode === 401 || err.statusCode === 403)) throw err;
    if (!(err instanceof EngineResponseError) && !(err instanceof EngineConnectionError)) throw err;
  }
}

async function probeWrite(client: PrivilegeProbeAccess, index: string, kind: WriteAction): Promise<void> {
  const id = probeId();
  const action =
    kind === 'update'
      ? `${JSON.stringify({ update: { _index: index, _id: id } })}\n${JSON.stringify({ doc: {} })}\n`
      : `${JSON.stringify({ index: { _index: index, _id: id, if_seq_no: 0, if_primary_term: 1 } })}\n{}\n`;
  const answer = await client.bulkNdjson(action);
  const item = Object.values(answer.items?.[0] ?? {})[0];
  if (item && item.status === 403 && privilegeRefusal(item.error)) {
    const error = typeof item.error === 'object' ? item.error : undefined;
    throw new EngineResponseError(403, error?.type, error?.reason, 'POST', '/_bulk', client.url, { error: item.error });
  }
  if (item && item.status >= 200 && item.status < 300) {
    // Never expected (no document has the id): said rather than hidden, though nothing of the user's was touched.
    throw new Error(`the privilege check wrote a document ${id} to ${index} (status ${item.status}); please report this`);
  }
}

/**
 * Refuses, before a scan reads (and a job writes) anything, a user who may open a scroll but not read its
 * next page (indices:data/read/scroll, a cluster-level action in OpenSearch): otherwise found only once the
 * first page has been read, and written back. A scroll of no documents, cleared at once.
 */
export async function requireScroll(client: Pick<PrivilegeProbeAccess, 'request' | 'info'>, index: string, sliced = false): Promise<void> {
  if (client.info?.serverless && !sliced) return;
  await onlyRefusals(() => probeScroll(client, index));
}

async function probeScroll(client: Pick<PrivilegeProbeAccess, 'request'>, index: string): Promise<void> {
  const opened = await client.request<{ _scroll_id?: string }>('POST', `/${encodeURIComponent(index).replace(/%2C/gi, ',').replace(/%2A/gi, '*')}/_search`, { size: 1, _source: false, query: { match_none: {} } }, { scroll: '10s' });
  const scrollId = opened._scroll_id;
  if (!scrollId) return;
  try {
    await client.request('POST', '/_search/scroll', { scroll: '10s', scroll_id: scrollId });
  } finally {
    await client.request('DELETE', '/_search/scroll', { scroll_id: [scrollId] }).catch(() => undefined);
  }
}
