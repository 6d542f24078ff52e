// Credentials never reach a message: URLs with or without a scheme, passwords holding / ? #, and engine
// answers that echo the request's Authorization header.
import { describe, expect, it } from 'vitest';
import { describeConnectionError, EngineResponseError } from '../../src/engine/errors.js';
import { parseClusterUrl, redactCredentials, redactSecret } from '../../src/engine/url.js';

const SECRET = 's3cr3t-Pw';

describe('redaction', () => {
  it('takes credentials out of URLs, with or without a scheme, whatever the password holds', () => {
    const texts = [
      `cannot connect to http://ann:${SECRET}@host:9200/x`,
      `cannot connect to ann:${SECRET}@host:9200`,
      `"ann:${SECRET}@10.0.0.1:9200" is not a URL`,
      `https://ann:${SECRET}/with?slash#hash@host:9200 failed`,
      `url=ann:${SECRET}@[::1]:9200`,
    ];
    for (const text of texts) {
      const redacted = redactCredentials(text);
      expect(redacted, text).not.toContain(SECRET);
      expect(redacted, text).not.toMatch(/ann:/);
    }
    expect(redactCredentials('index "logs-2026" at 12:30 on host:9200, ratio 1:2')).toBe('index "logs-2026" at 12:30 on host:9200, ratio 1:2');
  });

  it('takes the Authorization value out of an engine answer that echoes the request', () => {
    const body = `{"headers":{"Authorization":"Basic ${Buffer.from(`ann:${SECRET}`).toString('base64')}","x":1}} and authorization: Bearer abcdefghijklmnop, ApiKey QUJDREVGR0hJSktMTU5PUA==`;
    const redacted = redactCredentials(body);
    expect(redacted).not.toContain(Buffer.from(`ann:${SECRET}`).toString('base64'));
    expect(redacted).not.toContain('abcdefghijklmnop');
    expect(redacted).not.toContain('QUJDREVGR0hJSktMTU5PUA');
    const err = new EngineResponseError(400, 'illegal_argument_exception', body, 'POST', '/_bulk', 'http://host:9200', {});
    expect(describeConnectionError(err, { url: 'http://host:9200' }).message).not.toMatch(/QUJD|abcdefghijklmnop|ann:/);
  });

  it('any case of an auth scheme, Negotiate and Digest, token= and password= values, and the exact value a client sent', () => {
    const token = Buffer.from(`ann:${SECRET}`).toString('base64');
    for (const text of [`bearer ${token}`, `BASIC ${token}`, `Negotiate ${token}`, `token=${token}`, `{"api_key":"${token}"}`, `password: ${SECRET}`]) {
      expect(redactCredentials(text), text).not.toMatch(new RegExp(`${token}|${SECRET}`));
    }
    // An upstream error that echoes the client's own header in some form of its own.
    const echoed = `denied for credentials [${token.toLowerCase()}] and ${token}`;
    expect(redactSecret(echoed, `Basic ${token}`)).toBe('denied for credentials [[redacted]] and [redacted]');
    expect(redactCredentials('token_count 3, sample_size 4: keys of a signature')).toBe('token_count 3, sample_size 4: keys of a signature');
  });

  it('refuses a URL whose password holds / ? # unencoded, without printing it', () => {
    for (const raw of [`http://ann:${SECRET}/x@host:9200`, `ann:${SECRET}?x@host:9200`, `http://ann:12/${SECRET}@host:9200`]) {
      let message = '';
      try {
        parseClusterUrl(raw);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, raw).toMatch(/--url|not a URL/);
      expect(message, raw).not.toContain(SECRET);
    }
    expect(parseClusterUrl(`http://ann:${encodeURIComponent(`${SECRET}/?#`)}@host:9200`)).toEqual({ url: 'http://host:9200', username: 'ann', password: `${SECRET}/?#` });
  });
});
