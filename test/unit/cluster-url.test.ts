// A --url that cannot be read as written (a raw "%" in its credentials or path, a mistyped scheme, a port
// past 65535 or 0) is one usage line naming what is wrong and the fix, never the password; it was
// "unexpected error: URI malformed" for a "%", and "http:/host" went to the host "http".
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClusterUrl } from '../../src/engine/url.js';
import { UsageError } from '../../src/errors.js';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');

/** The UsageError parseClusterUrl throws for `url` (fails the test when it throws nothing or something else). */
function refusal(url: string): string {
  try {
    parseClusterUrl(url);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${url} was taken`);
}

describe('--url that cannot be read as written', () => {
  it('a raw "%" in the password: how to write it, and --password, without the password', () => {
    const message = refusal('http://elastic:p%ss@host:9200');
    expect(message).toBe(
      '--url "http://host:9200": its password holds a "%" that is not followed by two hexadecimal digits: write each "%" of it as %25, or give the password with --password (or SEARCH_PASSWORD) instead',
    );
    expect(message).not.toMatch(/p%ss|elastic/);
  });

  it('a raw "%" in the user name, and percent-encoded bytes that are not UTF-8', () => {
    expect(refusal('https://us%er:secret@host')).toMatch(/^--url "https:\/\/host": its user name holds a "%" .* --username \(or SEARCH_USERNAME\) instead$/);
    const latin1 = refusal('https://user:caf%e9@host');
    expect(latin1).toMatch(/its password holds percent-encoded bytes that are not UTF-8: write each character as its UTF-8 bytes \(é as %C3%A9\), or give the password with --password/);
    expect(latin1).not.toMatch(/caf|user/);
  });

  it('what is percent-encoded right is decoded as before', () => {
    expect(parseClusterUrl('http://elastic:p%25ss@host:9200')).toEqual({ url: 'http://host:9200', username: 'elastic', password: 'p%ss' });
    expect(parseClusterUrl('http://user:caf%C3%A9@host/pre%20fix')).toEqual({ url: 'http://host/pre%20fix', username: 'user', password: 'café' });
  });

  it('a raw "%" in the path prefix, a scheme without its "//", a port past 65535 or 0', () => {
    expect(refusal('http://host:9200/pre%fix')).toBe('--url "http://host:9200/pre%fix" has a "%" in its path that is not followed by two hexadecimal digits: write a "%" there as %25');
    expect(refusal('http:/host:9200')).toBe('--url "http:/host:9200" is not a URL: "http:" must be followed by "//", as in http://localhost:9200');
    expect(refusal('HTTPS:host')).toMatch(/^--url "HTTPS:host" is not a URL: "HTTPS:" must be followed by "\/\/"/);
    expect(refusal('http://user:pw@host:99999')).toBe('--url "http://host:99999" is not a URL: port 99999 is above 65535; give one like http://localhost:9200');
    expect(refusal('http://host:0')).toBe('--url "http://host:0" is not a URL: port 0 is no port to connect to; give one from 1 to 65535');
    // A host and port without a scheme is still http.
    expect(parseClusterUrl('localhost:9200').url).toBe('http://localhost:9200');
  });
});

describe.skipIf(!existsSync(CLI))('the real CLI process', () => {
  it.each([
    [['--url', 'http://elastic:p%ss@127.0.0.1:1'], {}],
    [[], { SEARCH_URL: 'http://elastic:p%ss@127.0.0.1:1' }],
  ])('near-dup init %j %j: exit 2, one line without the password', (args, env) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SEARCH_')));
    const result = spawnSync(process.execPath, [CLI, 'init', '--index', 'docs', ...args], { encoding: 'utf8', env: { ...clean, ...env } });
    expect(result.stderr).toBe(
      'near-dup: --url "http://127.0.0.1:1": its password holds a "%" that is not followed by two hexadecimal digits: write each "%" of it as %25, or give the password with --password (or SEARCH_PASSWORD) instead\n',
    );
    expect(result.status).toBe(2);
  });
});
