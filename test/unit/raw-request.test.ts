// The one raw request of detection and dashboards (engine/raw-request.ts), against a local server that answers
// without end or not at all: the answer is read up to its bound and no further, and either failure is one
// line naming the server, never the credentials.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConnection } from '../../src/engine/connection.js';
import { EngineConnectionError } from '../../src/engine/errors.js';
import { MAX_RAW_ANSWER_BYTES, rawRequest } from '../../src/engine/raw-request.js';
import { UserError } from '../../src/errors.js';

const PASSWORD = 'raw-pa55word-not-to-say';
let server: http.Server | undefined;

/** A server that runs `answer` for every request; its URL. */
async function serve(answer: http.RequestListener): Promise<string> {
  server = http.createServer(answer);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe('rawRequest', () => {
  it('refuses an answer past the bound in one line, and stops reading it', async () => {
    let closedAfter = 0;
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1 << 20, 0x20);
      let sent = 0;
      const more = () => {
        while (!res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return;
        }
      };
      res.on('drain', more);
      res.on('close', () => (closedAfter = sent));
      more();
    });
    const connection = await resolveConnection({ url, username: 'nd', password: PASSWORD });
    const attempt = rawRequest(connection, 'GET', new URL(`${url}/`));
    await expect(attempt).rejects.toThrow(UserError);
    const message = await attempt.catch((err: Error) => err.message);
    expect(message).toBe(`the answer of ${url} to GET / is larger than ${MAX_RAW_ANSWER_BYTES} bytes, more than near-dup reads as one answer; check --url`);
    await expect.poll(() => closedAfter).toBeGreaterThan(0);
    expect(closedAfter).toBeLessThan(2 * MAX_RAW_ANSWER_BYTES); // the server was cut off, not read to its end
  });

  it('a server that never answers is a timeout naming it, without the credentials', async () => {
    const url = await serve(() => {});
    const connection = await resolveConnection({ url: url.replace('http://', `http://nd:${PASSWORD}@`) });
    const attempt = rawRequest(connection, 'GET', new URL(`${url}/`), { timeoutMs: 100 });
    await expect(attempt).rejects.toThrow(EngineConnectionError);
    const err = (await attempt.catch((e: unknown) => e)) as EngineConnectionError;
    expect([err.timeout, err.url, err.message]).toEqual([true, url, 'no answer within 100 ms']);
  });
});
