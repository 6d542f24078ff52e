// The engine layer tells its own errors apart by class (instanceof), as a library caller does: a scan that
// lost its pages, a connection that failed or timed out. Only errors of other packages (the official
// clients', undici's, Node's AbortError) are still told apart by name, in retryCause, where a send function
// of anyone's may throw them as they are.
import { cliMessage } from '../../src/cli/option-flags.js';
import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import { EngineClient } from '../../src/engine/client.js';
import { EngineConnectionError, EngineResponseError, mayPass, ScanLostError } from '../../src/engine/errors.js';
import { onlyRefusals } from '../../src/engine/privileges.js';
import { retryCause } from '../../src/engine/retry.js';
import { ScanLostError as ScanLostFromScan } from '../../src/engine/scan.js';
import { UserError } from '../../src/errors.js';

const URL_ = 'http://127.0.0.1:9200';
const info = { flavour: 'opensearch' as const, version: '2.19.1', major: 2, minor: 19, url: URL_ };
const noSender = { send: async () => ({ statusCode: 200, body: {}, headers: {} }), close: async () => undefined };
const client = new EngineClient(info, noSender, { url: URL_, maxRetries: 0 } as never);

const refused = () => new EngineConnectionError('connect ECONNREFUSED 127.0.0.1:9200', 'ECONNREFUSED', URL_);
const timedOut = () => new EngineConnectionError('Request timed out', 'ETIMEDOUT', URL_, { timeout: true });

describe('ScanLostError', () => {
  it('is one class, whichever module a caller imports it from', () => {
    expect(ScanLostFromScan).toBe(ScanLostError);
    expect(api.ScanLostError).toBe(ScanLostError);
    expect(new ScanLostError('x')).toBeInstanceOf(Error);
    expect(new ScanLostError('x').name).toBe('ScanLostError');
  });

  it('is said by the client as a one-line UserError, and may pass', () => {
    const lost = new ScanLostError('reading docs lost 5 scroll pages in a row');
    const explained = client.explain(lost, 'docs');
    expect(explained).toBeInstanceOf(UserError);
    expect((explained as Error).message).toBe('reading docs lost 5 scroll pages in a row; run the same command again (with resume where the command has it)');
    expect(cliMessage(explained)).toBe('reading docs lost 5 scroll pages in a row; run the same command again (with --resume where the command has it)');
    expect((explained as Error).cause).toBe(lost);
    expect(mayPass(lost)).toBe(true);
    expect(mayPass(explained)).toBe(true);
  });
});

describe('EngineConnectionError', () => {
  it('says whether it timed out', () => {
    expect(timedOut().timeout).toBe(true);
    expect(timedOut().name).toBe('TimeoutError');
    expect(refused().timeout).toBe(false);
    expect(refused().name).toBe('ConnectionError');
  });

  it('is described by the client, and an error of no one known is returned as it is', () => {
    expect(client.explain(refused(), 'docs')).toBeInstanceOf(UserError);
    expect(client.explain(timedOut(), 'docs')).toBeInstanceOf(UserError);
    const bug = new TypeError('x is undefined');
    expect(client.explain(bug, 'docs')).toBe(bug);
  });

  it('is left to the job by a privilege check, as an engine failure is; a refusal and a bug are not', async () => {
    await expect(onlyRefusals(async () => Promise.reject(refused()))).resolves.toBeUndefined();
    await expect(onlyRefusals(async () => Promise.reject(timedOut()))).resolves.toBeUndefined();
    await expect(onlyRefusals(async () => Promise.reject(new EngineResponseError(503, undefined, 'busy', 'POST', '/_bulk', URL_, {})))).resolves.toBeUndefined();
    const forbidden = new EngineResponseError(403, 'security_exception', 'no permissions', 'POST', '/_bulk', URL_, {});
    await expect(onlyRefusals(async () => Promise.reject(forbidden))).rejects.toBe(forbidden);
    await expect(onlyRefusals(async () => Promise.reject(new TypeError('bug')))).rejects.toThrow('bug');
  });

  it('may pass, but for a TLS failure', () => {
    expect(mayPass(refused())).toBe(true);
    expect(mayPass(timedOut())).toBe(true);
    expect(mayPass(new EngineConnectionError('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT', URL_))).toBe(false);
  });
});

describe('retryCause', () => {
  it('takes near-dup connection failures by class', () => {
    expect(retryCause(timedOut())).toBe('timeout');
    expect(retryCause(refused())).toBe('connection');
    // As before: a connection failure is sent again whatever its code (the retries are bounded).
    expect(retryCause(new EngineConnectionError('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT', URL_))).toBe('connection');
  });

  it('takes the errors of other packages by name and code', () => {
    expect(retryCause(Object.assign(new Error('t'), { name: 'TimeoutError' }))).toBe('timeout');
    expect(retryCause(Object.assign(new Error('c'), { name: 'ConnectionError' }))).toBe('connection');
    expect(retryCause(Object.assign(new Error('n'), { name: 'NoLivingConnectionsError' }))).toBe('connection');
    expect(retryCause(new DOMException('aborted', 'AbortError'))).toBe('connection');
    expect(retryCause(Object.assign(new Error('r'), { code: 'ECONNRESET' }))).toBe('connection');
    expect(retryCause(new TypeError('bug'))).toBeUndefined();
  });
});
