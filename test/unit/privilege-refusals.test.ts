// Refusals for want of a privilege (issue 34, items 2 and 5), in the pure parts: the privilege found
// wherever the engine names it and said in one line with what to grant; a bulk item refused for a privilege
// stops the writer at once; a page refused while the one before is worked on never ends the process
// unhandled; a password holding # in --url.
import { describe, expect, it } from 'vitest';
import type { BulkResponseBody } from '../../src/engine/client.js';
import { describeConnectionError, EngineResponseError, mayPass } from '../../src/engine/errors.js';
import { requireWritePrivileges } from '../../src/engine/privileges.js';
import { isClusterLevel, parseReason, privilegeRefusal } from '../../src/engine/refusal.js';
import { readAhead } from '../../src/engine/scan.js';
import { parseClusterUrl } from '../../src/engine/url.js';
import { UserError } from '../../src/errors.js';
import { BulkWriter } from '../../src/jobs/bulk-writer.js';

const URL_ = 'https://127.0.0.1:9271';
const reason = (action: string) => `no permissions for [${action}] and User [name=u, backend_roles=[], requestedTenant=null]`;
const security = (action: string) => ({ type: 'security_exception', reason: reason(action) });

/** The one line a user sees for an engine's answer. */
function said(status: number, body: unknown, method = 'POST', path = '/idx/_refresh', index = 'idx'): string {
  const error = (body as { error?: { type?: string; reason?: string } }).error;
  const err = new EngineResponseError(status, error?.type, error?.reason, method, path, URL_, body);
  const described = describeConnectionError(err, { url: URL_, index });
  expect(described).toBeInstanceOf(UserError);
  return described.message;
}

describe('privilege refusals in the engine answers', () => {
  it('names the privilege of a refresh refused at shard level (403 with only shard failures)', () => {
    const body = { _shards: { total: 1, successful: 0, failed: 1, failures: [{ shard: 0, index: 'idx', status: 'FORBIDDEN', reason: security('indices:admin/refresh[s]') }] } };
    const line = said(403, body);
    expect(line).toContain('the user lacks the privilege indices:admin/refresh[s]');
    expect(line).toContain('add indices:admin/refresh[s] to its index_permissions for "idx"');
    expect(line).not.toContain('\n');
  });

  it('names a cluster-level privilege as one for cluster_permissions', () => {
    const line = said(403, { error: { root_cause: [security('indices:data/read/scroll')], ...security('indices:data/read/scroll') } }, 'POST', '/_search/scroll');
    expect(line).toContain('the user lacks the privilege indices:data/read/scroll; add indices:data/read/scroll to its cluster_permissions');
  });

  it('finds the term-vectors privilege behind a failed search (400 search_phase_execution_exception)', () => {
    const body = {
      error: {
        root_cause: [security('indices:data/read/mtv')],
        type: 'search_phase_execution_exception',
        reason: 'all shards failed',
        failed_shards: [{ shard: 0, index: 'idx', reason: { type: 'query_shard_exception', reason: 'failed to create query', caused_by: security('indices:data/read/mtv') } }],
      },
      status: 400,
    };
    const line = said(400, body, 'POST', '/idx/_msearch');
    expect(line).toContain('the user lacks the privilege indices:data/read/mtv');
    expect(line).not.toMatch(/all shards failed\)$/);
    // Not something to try again.
    expect(mayPass(new EngineResponseError(400, 'search_phase_execution_exception', 'all shards failed', 'POST', '/idx/_msearch', URL_, body))).toBe(false);
  });

  it("reads Elasticsearch's refusal and what it says grants it", () => {
    const refusal = parseReason(
      'action [indices:data/write/bulk[s]] is unauthorized for user [u] with effective roles [r] on indices [idx], this action is granted by the index privileges [create_doc,create,index,write,all]',
    );
    expect(refusal).toMatchObject({ actions: ['indices:data/write/bulk[s]'], grantedBy: { level: 'index', privileges: ['create_doc', 'create', 'index', 'write', 'all'] } });
    const line = said(403, { error: { type: 'security_exception', reason: refusal!.reason } }, 'POST', '/_bulk');
    expect(line).toContain('grant the user\'s role the index privilege "create_doc"');
  });

  it('keeps several actions named together, and tells cluster from index level', () => {
    expect(privilegeRefusal({ error: security('indices:data/write/bulk[s], indices:data/write/update') })?.actions).toEqual(['indices:data/write/bulk[s]', 'indices:data/write/update']);
    expect(isClusterLevel('cluster:monitor/main')).toBe(true);
    expect(isClusterLevel('indices:data/write/bulk')).toBe(true);
    expect(isClusterLevel('indices:data/write/bulk[s]')).toBe(false);
    expect(isClusterLevel('indices:data/read/mget[shard]')).toBe(false);
    expect(isClusterLevel('indices:admin/index_template/get')).toBe(true);
    // A 403 of another kind is not taken for a missing privilege.
    expect(privilegeRefusal({ error: { type: 'security_exception', reason: 'tenant not allowed' } })).toBeUndefined();
  });
});

describe('the bulk writer and a missing privilege', () => {
  const refusedItems = (body: string): BulkResponseBody => ({
    errors: true,
    items: body.trim().split('\n').filter((_, i) => i % 2 === 0).map(() => ({ update: { status: 403, error: security('indices:data/write/bulk[s], indices:data/write/update') } })),
  });

  it('stops at the first request whose items are refused for a privilege, and throws it', async () => {
    let requests = 0;
    const failed: string[] = [];
    const writer = new BulkWriter({
      maxOperations: 10,
      concurrency: 1,
      send: async (body) => {
        requests++;
        return refusedItems(body);
      },
      onFailure: (op) => failed.push(op.id),
    });
    const writeAll = async () => {
      for (let i = 0; i < 1000; i++) await writer.add({ id: `d${i}`, action: { update: { _id: `d${i}` } }, body: { doc: { n: i } } });
      await writer.flush();
    };
    const thrown = await writeAll().catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(EngineResponseError);
    expect((thrown as EngineResponseError).refusal?.actions).toEqual(['indices:data/write/bulk[s]', 'indices:data/write/update']);
    // Not a thousand documents failed one by one: the job stops after the first answer (and at most the one in flight).
    expect(requests).toBeLessThanOrEqual(2);
    expect(failed.length).toBeLessThanOrEqual(20);
  });

  it('runs its check before the first request only, and sends nothing when the check refuses', async () => {
    let checks = 0;
    let requests = 0;
    const writer = new BulkWriter({
      maxOperations: 2,
      send: async (body) => {
        requests++;
        return { errors: false, items: body.trim().split('\n').filter((_, i) => i % 2 === 0).map(() => ({ update: { status: 200 } })) };
      },
      beforeFirstSend: async () => {
        checks++;
      },
    });
    for (let i = 0; i < 6; i++) await writer.add({ id: `d${i}`, action: { update: { _id: `d${i}` } }, body: { doc: {} } });
    await writer.flush();
    expect([checks, requests]).toEqual([1, 3]);

    const refusing = new BulkWriter({
      maxOperations: 2,
      send: async () => {
        throw new Error('must not be sent');
      },
      beforeFirstSend: async () => {
        throw new UserError('refused before writing');
      },
    });
    const add = () => refusing.add({ id: 'x', action: { update: { _id: 'x' } }, body: { doc: {} } });
    await add();
    await expect(add()).rejects.toThrow('refused before writing');
    await expect(refusing.flush()).rejects.toThrow('refused before writing');
    expect(refusing.sentAny).toBe(false);
  });
});

describe('the write check changes nothing and names what is missing', () => {
  const client = (answer: (ndjson: string) => BulkResponseBody) => {
    const sent: string[] = [];
    const refreshed: string[] = [];
    return {
      sent,
      refreshed,
      url: URL_,
      request: async () => ({}) as never,
      bulkNdjson: async (ndjson: string) => {
        sent.push(ndjson);
        return answer(ndjson);
      },
      refresh: async (index: string) => void refreshed.push(index),
    };
  };

  it('sends an update of a document that does not exist, and an index that no document can match', async () => {
    const missing = client(() => ({ errors: true, items: [{ update: { status: 404, error: { type: 'document_missing_exception' } } }] }));
    await requireWritePrivileges(missing, 'idx-1', 'idx-*', { action: 'update', refresh: true });
    const [action, doc] = missing.sent[0].trim().split('\n').map((l) => JSON.parse(l));
    expect(action.update._index).toBe('idx-1');
    expect(action.update._id).toMatch(/^near-dup-privilege-check-/);
    expect(doc).toEqual({ doc: {} });
    expect(missing.refreshed).toEqual(['idx-*']);

    const conflict = client(() => ({ errors: true, items: [{ index: { status: 409, error: { type: 'version_conflict_engine_exception' } } }] }));
    await requireWritePrivileges(conflict, 'idx', 'idx', { action: 'index', refresh: false });
    expect(JSON.parse(conflict.sent[0].split('\n')[0]).index).toMatchObject({ _index: 'idx', if_seq_no: 0, if_primary_term: 1 });
    expect(conflict.refreshed).toEqual([]);
  });

  it('throws the refusal, before any refresh', async () => {
    const refused = client(() => ({ errors: true, items: [{ update: { status: 403, error: security('indices:data/write/update') } }] }));
    const thrown = await requireWritePrivileges(refused, 'idx', 'idx', { action: 'update', refresh: true }).catch((err: unknown) => err);
    expect((thrown as EngineResponseError).refusal?.actions).toEqual(['indices:data/write/update']);
    expect(refused.refreshed).toEqual([]);
  });
});

it('a page that fails while the caller works on the one before is not left unhandled', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const pages = (async function* () {
      yield 1;
      throw new EngineResponseError(403, 'security_exception', reason('indices:data/read/scroll'), 'POST', '/_search/scroll', URL_, {});
    })();
    const read = async () => {
      for await (const _ of readAhead(pages)) await new Promise((r) => setTimeout(r, 50)); // the next page fails meanwhile
    };
    await expect(read()).rejects.toThrow(/scroll/);
    await new Promise((r) => setTimeout(r, 10));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

describe('--url with a password that holds #', () => {
  it('says that the password must be percent-encoded (or given apart), not that a URL without it is not one', () => {
    const secret = 'pa#ss';
    for (const raw of [`https://admin:${secret}@127.0.0.1:9400`, `admin:${secret}@127.0.0.1:9400`]) {
      const thrown = (() => {
        try {
          parseClusterUrl(raw);
        } catch (err) {
          return err as Error;
        }
        return undefined;
      })();
      expect(thrown, raw).toBeDefined();
      expect(thrown?.message, raw).toMatch(/cannot be read as user:password@host.*percent-encoded.*--username and --password/);
      expect(thrown?.message, raw).not.toMatch(/is not a URL/);
      expect(thrown?.message, raw).not.toContain(secret);
    }
    // Percent-encoded, it works.
    expect(parseClusterUrl('https://admin:pa%23ss@127.0.0.1:9400')).toEqual({ url: 'https://127.0.0.1:9400', username: 'admin', password: 'pa#ss' });
  });
});
