// The explorer's own guards that need no engine: which Host header names it answers to, and what is said
// when it listens beyond loopback.
import { describe, expect, it } from 'vitest';
import { wideListenWarning } from '../../src/cli/commands/explore.js';
import { hostName } from '../../src/explore/server.js';

describe('explorer host names', () => {
  it('the name of a Host header, without port or IPv6 brackets, lower case; junk is no name', () => {
    expect(['localhost:9280', '[::1]:9280', 'Review.Example.COM', 'review.example.com.:80', '127.0.0.1'].map(hostName)).toEqual(['localhost', '::1', 'review.example.com', 'review.example.com', '127.0.0.1']);
    expect(['', undefined, 'a b', 'x:y:z', '[zz]:1', 'evil.com@127.0.0.1'].map((h) => hostName(h ?? undefined))).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
  });

  it('listening beyond loopback is said, with what to do; every interface also asks for --allow-host', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) expect(wideListenWarning(host), host).toBeUndefined();
    expect(wideListenWarning('0.0.0.0')).toMatch(/every network interface: anyone who can reach this port reads the index .* SSH tunnel.* --allow-host/);
    expect(wideListenWarning('10.1.2.3')).toMatch(/listening on 10\.1\.2\.3: anyone/);
  });
});
