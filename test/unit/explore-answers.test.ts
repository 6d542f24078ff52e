// The explorer's answers to failures (issue 37, item 6): a parameter is refused by name before anything is
// asked; an engine's error is told by its type and reason, 400 when the request was refused, 502/503/504
// when the cluster failed; no answer holds the cluster's address, its credentials or a node's address.
import { expect, it } from 'vitest';
import { describeConnectionError, EngineConnectionError, EngineResponseError } from '../../src/engine/errors.js';
import { UserError } from '../../src/errors.js';
import { listPosition, pageSize, ParamError, queryParams, searchText } from '../../src/explore/params.js';
import { failureAnswer, withoutAddress } from '../../src/explore/server.js';

const CLUSTER = 'https://es.internal.example:9243';

const body = (answer: ReturnType<typeof failureAnswer>) => JSON.stringify(answer.json);
const noAddress = (text: string) => {
  for (const part of ['es.internal', ':9243', 'https://', '10.1.2.3', 'secret']) expect(text).not.toContain(part);
};

it('takes the cluster out of a text, by URL, host and host:port, and any node address, leaving other words be', () => {
  expect(withoutAddress(`no document "x" on ${CLUSTER}; check the id`, CLUSTER)).toBe('no document "x" on the cluster; check the id');
  expect(withoutAddress('es.internal.example:9243 and es.internal.example refused', CLUSTER)).toBe('the cluster and the cluster refused');
  expect(withoutAddress('node [10.1.2.3:9300] left, [::1]:9300 too', CLUSTER)).toBe('node [an address] left, an address too');
  expect(withoutAddress('documents esteemed', 'http://es:9200')).toBe('documents esteemed');
  expect(withoutAddress('connect to es:9200 failed', 'http://es:9200')).toBe('connect to the cluster failed');
});

it("an engine's refusal is a 400 naming the parameters; its failure, overload or silence a 5xx; none names the cluster", () => {
  const response = (status: number, type: string, reason: string) => new EngineResponseError(status, type, reason, 'POST', '/docs/_search', CLUSTER, {});
  const refused = failureAnswer(response(400, 'search_phase_execution_exception', 'failed to parse on [10.1.2.3:9300]'), CLUSTER, ['size', 'after']);
  expect(refused.status).toBe(400);
  expect((refused.json as { error: string }).error).toMatch(/refused the request made from size, after \(400 search_phase_execution_exception: failed to parse on \[an address\]\)/);
  // The same, as the one-line UserError the client's explain() makes of it (it names the URL; its cause is kept).
  const described = describeConnectionError(response(400, 'x_content_parse_exception', 'bad'), { url: 'https://elastic:secret@es.internal.example:9243' });
  expect(described).toBeInstanceOf(UserError);
  const viaUser = failureAnswer(described, CLUSTER, ['q']);
  expect(viaUser.status).toBe(400);
  noAddress(body(viaUser));
  const cases: Array<[unknown, number]> = [
    [response(500, 'search_phase_execution_exception', `shard failed on ${CLUSTER}`), 502],
    [response(503, 'unavailable', 'no master'), 502],
    [response(429, 'es_rejected_execution_exception', 'queue full'), 503],
    [response(403, 'security_exception', 'action [indices:data/read/search] is unauthorized for user [elastic]'), 502],
    [response(404, 'index_not_found_exception', 'no such index [docs]'), 502],
    [new EngineConnectionError(`connect ECONNREFUSED 10.1.2.3:9243 (${CLUSTER})`, 'ECONNREFUSED', CLUSTER), 502],
    [describeConnectionError(new EngineConnectionError('socket hang up', 'ECONNRESET', CLUSTER), { url: CLUSTER }), 502],
    [new EngineConnectionError('timed out', 'ETIMEDOUT', CLUSTER, { timeout: true }), 504],
    [new UserError(`no document "x" in "docs" on ${CLUSTER}; check the id`), 400],
    [new TypeError(`cannot read ${CLUSTER}/docs`), 500],
  ];
  for (const [err, status] of cases) {
    const answer = failureAnswer(err, CLUSTER);
    expect(answer.status, String((err as Error).message)).toBe(status);
    noAddress(body(answer));
  }
});

it('parameters: each known, given once, and in its range, else refused by name', () => {
  const refusal = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(ParamError);
      return [(err as ParamError).parameter, (err as ParamError).status];
    }
    throw new Error('not refused');
  };
  expect([...queryParams(new URLSearchParams('size=2&q=x'), ['size', 'q'])]).toEqual([['size', '2'], ['q', 'x']]);
  expect(refusal(() => queryParams(new URLSearchParams('size=2&size=3'), ['size']))).toEqual(['size', 400]);
  expect(refusal(() => queryParams(new URLSearchParams('limit=2'), ['size']))).toEqual(['limit', 400]);
  expect([pageSize(undefined), pageSize('1'), pageSize('200')]).toEqual([25, 1, 200]);
  for (const bad of ['', '0', '201', '-1', '1.5', '1e2', 'NaN', ' 5', '0x10', '00000000001']) expect(refusal(() => pageSize(bad))).toEqual(['size', 400]);
  expect(listPosition('WzEsIngiXQ')).toBe('WzEsIngiXQ');
  for (const bad of ['', '!!', 'a b', 'A'.repeat(3000)]) expect(refusal(() => listPosition(bad))).toEqual(['after', 400]);
  expect([searchText(undefined), searchText('  '), searchText('words')]).toEqual([undefined, undefined, 'words']);
  expect(refusal(() => searchText('x'.repeat(5000)))).toEqual(['q', 400]);
});
