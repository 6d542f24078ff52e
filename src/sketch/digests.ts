// SHA-1 and MD5 over a byte range, returning only the words the sketches need. Tokens are short and
// numerous; node:crypto and the WebAssembly hashers spend most of their time per call crossing into
// native code, so a plain-JS compression function is several times faster here (see BENCHMARKS.md).
// Correctness is tested against node:crypto on random inputs of every length up to several blocks.

const sha1W = new Int32Array(80);
const md5X = new Int32Array(16);
let padBuf = new Uint8Array(128);

/** Copies bytes[0, len) into a padded message (Merkle–Damgård, 64-byte blocks, bit length at the end). */
function pad(bytes: Uint8Array, len: number, bigEndianLength: boolean): { buf: Uint8Array; blocks: number } {
  const total = ((len + 8) >> 6) + 1;
  const size = total * 64;
  if (padBuf.length < size) padBuf = new Uint8Array(size * 2);
  const buf = padBuf;
  buf.set(bytes.subarray(0, len), 0);
  buf[len] = 0x80;
  buf.fill(0, len + 1, size);
  const bitsLo = (len << 3) >>> 0;
  const bitsHi = Math.floor(len / 0x20000000);
  if (bigEndianLength) {
    buf[size - 1] = bitsLo;
    buf[size - 2] = bitsLo >>> 8;
    buf[size - 3] = bitsLo >>> 16;
    buf[size - 4] = bitsLo >>> 24;
    buf[size - 5] = bitsHi;
    buf[size - 6] = bitsHi >>> 8;
    buf[size - 7] = bitsHi >>> 16;
    buf[size - 8] = bitsHi >>> 24;
  } else {
    buf[size - 8] = bitsLo;
    buf[size - 7] = bitsLo >>> 8;
    buf[size - 6] = bitsLo >>> 16;
    buf[size - 5] = bitsLo >>> 24;
    buf[size - 4] = bitsHi;
    buf[size - 3] = bitsHi >>> 8;
    buf[size - 2] = bitsHi >>> 16;
    buf[size - 1] = bitsHi >>> 24;
  }
  return { buf, blocks: total };
}

/** The first 32-bit word of SHA-1(bytes[0, len)), big-endian as in the digest. */
export function sha1FirstWord(bytes: Uint8Array, len: number): number {
  const { buf, blocks } = pad(bytes, len, true);
  const w = sha1W;
  let h0 = 0x67452301, h1 = 0xefcdab89 | 0, h2 = 0x98badcfe | 0, h3 = 0x10325476, h4 = 0xc3d2e1f0 | 0;
  for (let blk = 0; blk < blocks; blk++) {
    const o = blk * 64;
    for (let i = 0; i < 16; i++) {
      const j = o + i * 4;
      w[i] = (buf[j] << 24) | (buf[j + 1] << 16) | (buf[j + 2] << 8) | buf[j + 3];
    }
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
      w[i] = (x << 1) | (x >>> 31);
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4;
    for (let i = 0; i < 80; i++) {
      let f: number, k: number;
      if (i < 20) { f = (b & c) | (~b & d); k = 0x5a827999; }
      else if (i < 40) { f = b ^ c ^ d; k = 0x6ed9eba1; }
      else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8f1bbcdc | 0; }
      else { f = b ^ c ^ d; k = 0xca62c1d6 | 0; }
      const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]) | 0;
      e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = t;
    }
    h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0; h4 = (h4 + e) | 0;
  }
  return h0 >>> 0;
}

const MD5_S = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
const MD5_K = new Int32Array(64).map((_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 0x100000000) | 0);

/**
 * The first 8 bytes of MD5(bytes[0, len)) read as a big-endian unsigned 64-bit integer, returned as
 * [high 32 bits, low 32 bits] into `out`.
 */
export function md5First64(bytes: Uint8Array, len: number, out: Uint32Array): void {
  const { buf, blocks } = pad(bytes, len, false);
  const x = md5X;
  let a0 = 0x67452301, b0 = 0xefcdab89 | 0, c0 = 0x98badcfe | 0, d0 = 0x10325476;
  for (let blk = 0; blk < blocks; blk++) {
    const o = blk * 64;
    for (let i = 0; i < 16; i++) {
      const j = o + i * 4;
      x[i] = buf[j] | (buf[j + 1] << 8) | (buf[j + 2] << 16) | (buf[j + 3] << 24);
    }
    let a = a0, b = b0, c = c0, d = d0;
    for (let i = 0; i < 64; i++) {
      let f: number, g: number;
      const round = i >> 4;
      if (round === 0) { f = (b & c) | (~b & d); g = i; }
      else if (round === 1) { f = (d & b) | (~d & c); g = (5 * i + 1) & 15; }
      else if (round === 2) { f = b ^ c ^ d; g = (3 * i + 5) & 15; }
      else { f = c ^ (b | ~d); g = (7 * i) & 15; }
      const s = MD5_S[(round << 2) | (i & 3)];
      const sum = (a + f + MD5_K[i] + x[g]) | 0;
      a = d; d = c; c = b;
      b = (b + ((sum << s) | (sum >>> (32 - s)))) | 0;
    }
    a0 = (a0 + a) | 0; b0 = (b0 + b) | 0; c0 = (c0 + c) | 0; d0 = (d0 + d) | 0;
  }
  out[0] = byteSwap(a0);
  out[1] = byteSwap(b0);
}

function byteSwap(v: number): number {
  return (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
}

export { byteSwap };
