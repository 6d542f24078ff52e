import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { md5First64, sha1FirstWord } from '../../src/sketch/digests.js';
import { byteHash, CachedByteHash, tokenHash } from '../../src/sketch/token-hash.js';

describe('SHA-1 and MD5 over byte ranges', () => {
  it('equal node:crypto for every length from 0 to 300 bytes, at any offset', () => {
    const out = new Uint32Array(2);
    for (let len = 0; len <= 300; len++) {
      const buf = randomBytes(len + 7);
      const start = len % 7;
      const data = buf.subarray(start, start + len);
      const sha1 = createHash('sha1').update(data).digest();
      expect(sha1FirstWord(buf, start, start + len)).toBe(sha1.readUInt32BE(0));
      const md5 = createHash('md5').update(data).digest();
      md5First64(buf, start, start + len, out);
      expect([out[0], out[1]]).toEqual([md5.readUInt32BE(0), md5.readUInt32BE(4)]);
    }
  });

  it('sha1 token hash is datasketch sha1_hash32: first 4 digest bytes little-endian', () => {
    for (const token of ['', 'a', 'hello', 'café', '日本語', '🙂', 'x'.repeat(1000)]) {
      const expected = createHash('sha1').update(token, 'utf8').digest().readUInt32LE(0);
      expect(tokenHash('sha1', token)).toBe(expected);
    }
  });

  it('crc32 token hash is zlib crc32 of the UTF-8 bytes', () => {
    expect(tokenHash('crc32', 'hello')).toBe(crc32(Buffer.from('hello')));
    expect(tokenHash('crc32', 'café')).toBe(crc32(Buffer.from('café')));
  });
});

describe('CachedByteHash', () => {
  it('answers exactly what the wrapped hash answers, across collisions and evictions', () => {
    const sha1 = byteHash('sha1');
    const cache = new CachedByteHash(sha1, 4); // 16 slots: forces evictions and slot sharing
    const words = Array.from({ length: 500 }, (_, i) => `w${(i * 7919) % 97}${'z'.repeat(i % 30)}`);
    const enc = new TextEncoder();
    for (let round = 0; round < 3; round++) {
      for (const w of words) {
        const bytes = enc.encode(`..${w}..`);
        expect(cache.get(bytes, 2, bytes.length - 2)).toBe(sha1(bytes, 2, bytes.length - 2));
      }
    }
  });
});
