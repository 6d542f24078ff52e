// WebAssembly SIMD kernels of the signer and the normalizer (AssemblyScript, built by `npm run build`
// with asc into dist/sketch/kernels.wasm). Every kernel computes bit for bit what the JavaScript
// reference computes (src/sketch, src/text); test/unit/wasm-kernels.test.ts checks that on random
// inputs, and the JavaScript stays the fallback where the kernels cannot load.
//   - MD5 of many messages at once, one per i32x4 lane (multi-buffer): one-block messages (up to 55
//     bytes, nearly every word 4-shingle) 16 at a time as four interleaved groups, longer ones 4 at a
//     time; and simhash-py's SimHash bit counts over the digests, inside wasm;
//   - SHA-1, 4 lanes, behind a memo of short tokens, for datasketch's sha1_hash32; MurmurHash3 and
//     CRC-32 of tokens, for the mmh3 and crc32 condensers;
//   - MinHash affine32 updates, four permutations per i32x4 operation, 16 kept in registers;
//   - the word layout of ASCII text (16 bytes at a time when it is laid out already) and the ASCII
//     folding pass of the normalizer, typographic punctuation put in ASCII first.
// Memory: [static scratch][token-hash memo][arena]. The JS side (src/sketch/wasm-kernels.ts) owns the
// arena: it copies a document's bytes and ranges there and passes pointers.

// ---- memory ----------------------------------------------------------------------------------------

// The token-hash memo: sets of two 32-byte entries (a 24-byte key, its length + 1, the value), a set one
// 64-byte cache line, so that a look-up reads one line (a table of keys, lengths and values apart read
// three, and a memo of 2 MB misses the caches on most of them); two ways halve the misses of one.
const MEMO_SETS: i32 = 1 << 15;
const MEMO_SET_MASK: i32 = MEMO_SETS - 1;
const MEMO_KEY_BYTES: i32 = 24;

// Four 64-byte message blocks, one per lane, and small per-lane tables.
const BLOCKS: usize = memory.data(256, 16);
const LANE_PTR: usize = memory.data(16, 16);
const LANE_LEN: usize = memory.data(16, 16);
const LANE_ID: usize = memory.data(16, 16);
const LONG_PTR: usize = memory.data(16, 16);
const LONG_LEN: usize = memory.data(16, 16);
const LONG_ID: usize = memory.data(16, 16);
const DIGEST: usize = memory.data(16 * 5, 16);
// The 16-lane MD5 of one-block messages: sixteen blocks, their words transposed (four groups of four
// lanes), the digests of groups 2 to 4.
const BLOCKS16: usize = memory.data(1024, 16);
const X16: usize = memory.data(1024, 16);
const DIGEST2: usize = memory.data(16 * 2, 16);
const DIGEST3: usize = memory.data(16 * 2, 16);
const DIGEST4: usize = memory.data(16 * 2, 16);
// MD5 per step (RFC 1321): the constants (round 4 minus one, see md5Short16), the message word, and
// per round the four rotations.
const MD5_K: usize = memory.data<u8>([120, 164, 106, 215, 86, 183, 199, 232, 219, 112, 32, 36, 238, 206, 189, 193, 175, 15, 124, 245, 42, 198, 135, 71, 19, 70, 48, 168, 1, 149, 70, 253, 216, 152, 128, 105, 175, 247, 68, 139, 177, 91, 255, 255, 190, 215, 92, 137, 34, 17, 144, 107, 147, 113, 152, 253, 142, 67, 121, 166, 33, 8, 180, 73, 98, 37, 30, 246, 64, 179, 64, 192, 81, 90, 94, 38, 170, 199, 182, 233, 93, 16, 47, 214, 83, 20, 68, 2, 129, 230, 161, 216, 200, 251, 211, 231, 230, 205, 225, 33, 214, 7, 55, 195, 135, 13, 213, 244, 237, 20, 90, 69, 5, 233, 227, 169, 248, 163, 239, 252, 217, 2, 111, 103, 138, 76, 42, 141, 66, 57, 250, 255, 129, 246, 113, 135, 34, 97, 157, 109, 12, 56, 229, 253, 68, 234, 190, 164, 169, 207, 222, 75, 96, 75, 187, 246, 112, 188, 191, 190, 198, 126, 155, 40, 250, 39, 161, 234, 133, 48, 239, 212, 5, 29, 136, 4, 57, 208, 212, 217, 229, 153, 219, 230, 248, 124, 162, 31, 101, 86, 172, 196, 67, 34, 41, 244, 150, 255, 42, 67, 166, 35, 148, 171, 56, 160, 147, 252, 194, 89, 91, 101, 145, 204, 12, 143, 124, 244, 239, 255, 208, 93, 132, 133, 78, 126, 168, 111, 223, 230, 44, 254, 19, 67, 1, 163, 160, 17, 8, 78, 129, 126, 83, 247, 52, 242, 58, 189, 186, 210, 215, 42, 144, 211, 134, 235]);
const MD5_X: usize = memory.data<u8>([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1, 6, 11, 0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 5, 8, 11, 14, 1, 4, 7, 10, 13, 0, 3, 6, 9, 12, 15, 2, 0, 7, 14, 5, 12, 3, 10, 1, 8, 15, 6, 13, 4, 11, 2, 9]);
const MD5_S: usize = memory.data<u8>([7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]);
// The 4-lane MD5's message words, transposed.
const XW: usize = memory.data(256, 16);
const SHORT_PTR: usize = memory.data(64, 16);
const SHORT_LEN: usize = memory.data(64, 16);
const SHORT_ID: usize = memory.data(64, 16);
// SimHash: 8 vectors of packed 4-bit counters, and 64 vectors of 32-bit counts (one per lane).
const PACKED: usize = memory.data(16 * 8, 16);
const COUNTS: usize = memory.data(16 * 64, 16);

let memo: usize = 0;
let arena: usize = 0;

function growTo(end: usize): bool {
  const have = <usize>memory.size() << 16;
  if (end <= have) return true;
  const pages = <i32>((end - have + 0xffff) >> 16);
  return memory.grow(pages) >= 0;
}

/** Sets up the memo; returns where the arena starts (16-byte aligned). */
export function init(): usize {
  if (arena == 0) {
    memo = (__heap_base + 63) & ~<usize>63;
    arena = memo + (<usize>MEMO_SETS << 6);
    if (!growTo(arena)) unreachable();
    memory.fill(memo, 0, <usize>MEMO_SETS << 6); // an entry's length + 1 at 24: 0 = empty
  }
  return arena;
}

/** Makes [0, end) addressable; false if the memory cannot grow that far. */
export function ensure(end: usize): bool {
  return growTo(end);
}

// ---- shared helpers -------------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function rotl(x: v128, n: i32): v128 {
  return v128.or(i32x4.shl(x, n), i32x4.shr_u(x, 32 - n));
}

// @ts-ignore: decorator
@inline function rotl16(x: v128): v128 {
  return i8x16.shuffle(x, x, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
}

// @ts-ignore: decorator
@inline function bswapLanes(x: v128): v128 {
  return i8x16.shuffle(x, x, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
}

function blockCount(len: i32): i32 {
  return ((len + 8) >> 6) + 1;
}

/**
 * Writes block `index` of the message [ptr, ptr + len) into lane `lane` of BLOCKS, with Merkle-Damgard
 * padding; the bit length goes in words 14 and 15, little-endian (MD5) or big-endian (SHA-1), in the
 * message's last block.
 */
function loadBlock(lane: i32, ptr: usize, len: i32, index: i32, bigEndian: bool): void {
  loadBlockAt(BLOCKS + (<usize>lane << 6), ptr, len, index, bigEndian);
}

function loadBlockAt(dst: usize, ptr: usize, len: i32, index: i32, bigEndian: bool): void {
  const base = index << 6;
  let dataEnd = len - base;
  if (dataEnd > 64) dataEnd = 64;
  if (dataEnd < 0) dataEnd = 0;
  if (dataEnd > 0) memory.copy(dst, ptr + <usize>base, <usize>dataEnd);
  if (dataEnd < 64) {
    store<u8>(dst + <usize>dataEnd, len >= base ? 0x80 : 0);
    if (dataEnd < 63) memory.fill(dst + <usize>dataEnd + 1, 0, <usize>(63 - dataEnd));
  }
  if (index == (len + 8) >> 6) {
    const bitsLo = len << 3;
    const bitsHi = len >>> 29;
    if (bigEndian) {
      store<u32>(dst + 56, bswap<u32>(bitsHi));
      store<u32>(dst + 60, bswap<u32>(bitsLo));
    } else {
      store<u32>(dst + 56, bitsLo);
      store<u32>(dst + 60, bitsHi);
    }
  }
}

// Row r (16 bytes) of each lane's block, transposed: word 4r + k of every lane in vector k.
// @ts-ignore: decorator
@inline function row(lane: i32, r: i32): v128 {
  return v128.load(BLOCKS + (<usize>lane << 6) + (<usize>r << 4));
}

// ---- MD5, four lanes -------------------------------------------------------------------------------

/** One MD5 compression of the four blocks in BLOCKS into the state DIGEST[0..3]; lanes where `mask` is 0 keep their state. */
function md5Compress(mask: v128): void {
  const a0 = v128.load(DIGEST), b0 = v128.load(DIGEST, 16), c0 = v128.load(DIGEST, 32), d0 = v128.load(DIGEST, 48);
  // The blocks' words, transposed: word w of every lane in XW + 16w.
  for (let r = 0; r < 4; r++) {
    const r0 = row(0, r), r1 = row(1, r), r2 = row(2, r), r3 = row(3, r);
    const t0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5), t1 = i32x4.shuffle(r0, r1, 2, 6, 3, 7);
    const t2 = i32x4.shuffle(r2, r3, 0, 4, 1, 5), t3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
    const out = XW + (<usize>r << 6);
    v128.store(out, i32x4.shuffle(t0, t2, 0, 1, 4, 5));
    v128.store(out, i32x4.shuffle(t0, t2, 2, 3, 6, 7), 16);
    v128.store(out, i32x4.shuffle(t1, t3, 0, 1, 4, 5), 32);
    v128.store(out, i32x4.shuffle(t1, t3, 2, 3, 6, 7), 48);
  }
  let a = a0, b = b0, c = c0, d = d0;
  for (let i = 0; i < 64; i++) {
    const f = i < 16 ? v128.bitselect(c, d, b) : i < 32 ? v128.bitselect(b, c, d) : i < 48 ? v128.xor(v128.xor(b, c), d) : i32x4.neg(v128.xor(c, v128.andnot(d, b)));
    const t = md5Add(a, f, XW + (<usize>load<u8>(MD5_X + <usize>i) << 4), i32x4.splat(load<u32>(MD5_K + (<usize>i << 2))));
    a = d; d = c; c = b; b = i32x4.add(rotl(t, <i32>load<u8>(MD5_S + <usize>((i >> 4) << 2 | (i & 3)))), b);
  }
  v128.store(DIGEST, v128.bitselect(i32x4.add(a0, a), a0, mask));
  v128.store(DIGEST, v128.bitselect(i32x4.add(b0, b), b0, mask), 16);
  v128.store(DIGEST, v128.bitselect(i32x4.add(c0, c), c0, mask), 32);
  v128.store(DIGEST, v128.bitselect(i32x4.add(d0, d), d0, mask), 48);
}

// @ts-ignore: decorator
@inline function laneMask(n: i32): v128 {
  return i32x4.gt_s(i32x4.splat(n), i32x4(0, 1, 2, 3));
}

/**
 * MD5 of the n (1 to 4) messages in ptrs/lens (any lengths); leaves the first 8 digest bytes of each as
 * big-endian words in DIGEST (vector 0: the high words, vector 1: the low words).
 */
function md5Lanes(ptrs: usize, lens: usize, n: i32): void {
  v128.store(DIGEST, i32x4.splat(0x67452301));
  v128.store(DIGEST, i32x4.splat(0xefcdab89), 16);
  v128.store(DIGEST, i32x4.splat(0x98badcfe), 32);
  v128.store(DIGEST, i32x4.splat(0x10325476), 48);
  let blocks = 0;
  const counts = i32x4(
    n > 0 ? blockCount(load<i32>(lens)) : 0,
    n > 1 ? blockCount(load<i32>(lens, 4)) : 0,
    n > 2 ? blockCount(load<i32>(lens, 8)) : 0,
    n > 3 ? blockCount(load<i32>(lens, 12)) : 0,
  );
  for (let j = 0; j < n; j++) {
    const c = blockCount(load<i32>(lens + (<usize>j << 2)));
    if (c > blocks) blocks = c;
  }
  for (let blk = 0; blk < blocks; blk++) {
    for (let j = 0; j < n; j++) {
      const len = load<i32>(lens + (<usize>j << 2));
      if (blk < blockCount(len)) loadBlock(j, load<usize>(ptrs + (<usize>j << 2)), len, blk, false);
    }
    md5Compress(blk == 0 ? i32x4.splat(-1) : i32x4.gt_s(counts, i32x4.splat(blk)));
  }
  v128.store(DIGEST, bswapLanes(v128.load(DIGEST)));
  v128.store(DIGEST, bswapLanes(v128.load(DIGEST, 16)), 16);
}

/**
 * The one MD5 block of a message of at most 55 bytes, at dst: the bytes, 0x80, zeros, the bit length.
 * Reads 64 bytes at ptr (the arena keeps slack after every allocation for that) and masks them.
 */
function shortBlock(dst: usize, ptr: usize, len: i32): void {
  const n = i8x16.splat(<i8>len);
  const index = i8x16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const marker = i8x16.splat(<i8>0x80);
  for (let r = 0; r < 4; r++) {
    const at = i8x16.add(index, i8x16.splat(<i8>(r << 4)));
    const data = v128.and(v128.load(ptr + (<usize>r << 4)), i8x16.lt_u(at, n));
    v128.store(dst + (<usize>r << 4), v128.or(data, v128.and(i8x16.eq(at, n), marker)));
  }
  store<u32>(dst + 56, <u32>len << 3);
}

// Transposes the blocks of lanes 4g..4g+3 of BLOCKS16 into 16 word vectors at dst.
function transposeBlocks(g: i32, dst: usize): void {
  const src = BLOCKS16 + (<usize>g << 8);
  for (let r = 0; r < 4; r++) {
    const off = <usize>r << 4;
    const r0 = v128.load(src + off), r1 = v128.load(src + 64 + off), r2 = v128.load(src + 128 + off), r3 = v128.load(src + 192 + off);
    const t0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5), t1 = i32x4.shuffle(r0, r1, 2, 6, 3, 7);
    const t2 = i32x4.shuffle(r2, r3, 0, 4, 1, 5), t3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
    const d = dst + (off << 2);
    v128.store(d, i32x4.shuffle(t0, t2, 0, 1, 4, 5));
    v128.store(d, i32x4.shuffle(t0, t2, 2, 3, 6, 7), 16);
    v128.store(d, i32x4.shuffle(t1, t3, 0, 1, 4, 5), 32);
    v128.store(d, i32x4.shuffle(t1, t3, 2, 3, 6, 7), 48);
  }
}

/**
 * MD5 of n (1 to 16) messages of at most 55 bytes (one block each) in SHORT_PTR/SHORT_LEN, as four
 * interleaved groups of four lanes: one group's steps form a single dependency chain, which leaves
 * most of the vector units idle; four independent chains keep them busy. Leaves the first 8 digest
 * bytes as big-endian words: lanes 0-3 in DIGEST, 4-7 in DIGEST2, 8-11 in DIGEST3, 12-15 in DIGEST4
 * (vector 0: the high words, vector 1: the low words).
 */
function md5Short16(n: i32): void {
  for (let j = 0; j < n; j++) shortBlock(BLOCKS16 + (<usize>j << 6), load<usize>(SHORT_PTR + (<usize>j << 2)), load<i32>(SHORT_LEN + (<usize>j << 2)));
  transposeBlocks(0, X16);
  transposeBlocks(1, X16 + 256);
  transposeBlocks(2, X16 + 512);
  transposeBlocks(3, X16 + 768);
  const a0 = i32x4.splat(0x67452301), b0 = i32x4.splat(0xefcdab89), c0 = i32x4.splat(0x98badcfe), d0 = i32x4.splat(0x10325476);
  let a = a0, b = b0, c = c0, d = d0;
  let a2 = a0, b2 = b0, c2 = c0, d2 = d0;
  let a3 = a0, b3 = b0, c3 = c0, d3 = d0;
  let a4 = a0, b4 = b0, c4 = c0, d4 = d0;
  let k: v128, x: usize;
  // The 64 steps of RFC 1321 in the form that needs no turning of the state: four steps (each with its
  // own rotation, a constant) per turn of a loop, four turns a round, one boolean function a round;
  // the four groups side by side in each step.
  for (let i = 0; i < 16; i += 4) {
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i)) << 4);
    a = md5F(a, b, c, d, x, k, 7);
    a2 = md5F(a2, b2, c2, d2, x + 256, k, 7);
    a3 = md5F(a3, b3, c3, d3, x + 512, k, 7);
    a4 = md5F(a4, b4, c4, d4, x + 768, k, 7);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 1) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 1)) << 4);
    d = md5F(d, a, b, c, x, k, 12);
    d2 = md5F(d2, a2, b2, c2, x + 256, k, 12);
    d3 = md5F(d3, a3, b3, c3, x + 512, k, 12);
    d4 = md5F(d4, a4, b4, c4, x + 768, k, 12);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 2) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 2)) << 4);
    c = md5F(c, d, a, b, x, k, 17);
    c2 = md5F(c2, d2, a2, b2, x + 256, k, 17);
    c3 = md5F(c3, d3, a3, b3, x + 512, k, 17);
    c4 = md5F(c4, d4, a4, b4, x + 768, k, 17);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 3) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 3)) << 4);
    b = md5F(b, c, d, a, x, k, 22);
    b2 = md5F(b2, c2, d2, a2, x + 256, k, 22);
    b3 = md5F(b3, c3, d3, a3, x + 512, k, 22);
    b4 = md5F(b4, c4, d4, a4, x + 768, k, 22);
  }
  for (let i = 16; i < 32; i += 4) {
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i)) << 4);
    a = md5G(a, b, c, d, x, k, 5);
    a2 = md5G(a2, b2, c2, d2, x + 256, k, 5);
    a3 = md5G(a3, b3, c3, d3, x + 512, k, 5);
    a4 = md5G(a4, b4, c4, d4, x + 768, k, 5);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 1) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 1)) << 4);
    d = md5G(d, a, b, c, x, k, 9);
    d2 = md5G(d2, a2, b2, c2, x + 256, k, 9);
    d3 = md5G(d3, a3, b3, c3, x + 512, k, 9);
    d4 = md5G(d4, a4, b4, c4, x + 768, k, 9);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 2) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 2)) << 4);
    c = md5G(c, d, a, b, x, k, 14);
    c2 = md5G(c2, d2, a2, b2, x + 256, k, 14);
    c3 = md5G(c3, d3, a3, b3, x + 512, k, 14);
    c4 = md5G(c4, d4, a4, b4, x + 768, k, 14);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 3) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 3)) << 4);
    b = md5G(b, c, d, a, x, k, 20);
    b2 = md5G(b2, c2, d2, a2, x + 256, k, 20);
    b3 = md5G(b3, c3, d3, a3, x + 512, k, 20);
    b4 = md5G(b4, c4, d4, a4, x + 768, k, 20);
  }
  for (let i = 32; i < 48; i += 4) {
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i)) << 4);
    a = md5H(a, b, c, d, x, k, 4);
    a2 = md5H(a2, b2, c2, d2, x + 256, k, 4);
    a3 = md5H(a3, b3, c3, d3, x + 512, k, 4);
    a4 = md5H(a4, b4, c4, d4, x + 768, k, 4);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 1) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 1)) << 4);
    d = md5H(d, a, b, c, x, k, 11);
    d2 = md5H(d2, a2, b2, c2, x + 256, k, 11);
    d3 = md5H(d3, a3, b3, c3, x + 512, k, 11);
    d4 = md5H(d4, a4, b4, c4, x + 768, k, 11);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 2) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 2)) << 4);
    c = md5H(c, d, a, b, x, k, 16);
    c2 = md5H(c2, d2, a2, b2, x + 256, k, 16);
    c3 = md5H(c3, d3, a3, b3, x + 512, k, 16);
    c4 = md5H(c4, d4, a4, b4, x + 768, k, 16);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 3) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 3)) << 4);
    b = md5H(b, c, d, a, x, k, 23);
    b2 = md5H(b2, c2, d2, a2, x + 256, k, 23);
    b3 = md5H(b3, c3, d3, a3, x + 512, k, 23);
    b4 = md5H(b4, c4, d4, a4, x + 768, k, 23);
  }
  for (let i = 48; i < 64; i += 4) {
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i)) << 4);
    a = md5I(a, b, c, d, x, k, 6);
    a2 = md5I(a2, b2, c2, d2, x + 256, k, 6);
    a3 = md5I(a3, b3, c3, d3, x + 512, k, 6);
    a4 = md5I(a4, b4, c4, d4, x + 768, k, 6);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 1) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 1)) << 4);
    d = md5I(d, a, b, c, x, k, 10);
    d2 = md5I(d2, a2, b2, c2, x + 256, k, 10);
    d3 = md5I(d3, a3, b3, c3, x + 512, k, 10);
    d4 = md5I(d4, a4, b4, c4, x + 768, k, 10);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 2) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 2)) << 4);
    c = md5I(c, d, a, b, x, k, 15);
    c2 = md5I(c2, d2, a2, b2, x + 256, k, 15);
    c3 = md5I(c3, d3, a3, b3, x + 512, k, 15);
    c4 = md5I(c4, d4, a4, b4, x + 768, k, 15);
    k = i32x4.splat(load<u32>(MD5_K + (<usize>(i + 3) << 2)));
    x = X16 + (<usize>load<u8>(MD5_X + <usize>(i + 3)) << 4);
    b = md5I(b, c, d, a, x, k, 21);
    b2 = md5I(b2, c2, d2, a2, x + 256, k, 21);
    b3 = md5I(b3, c3, d3, a3, x + 512, k, 21);
    b4 = md5I(b4, c4, d4, a4, x + 768, k, 21);
  }
  v128.store(DIGEST, bswapLanes(i32x4.add(a0, a)));
  v128.store(DIGEST, bswapLanes(i32x4.add(b0, b)), 16);
  v128.store(DIGEST2, bswapLanes(i32x4.add(a0, a2)));
  v128.store(DIGEST2, bswapLanes(i32x4.add(b0, b2)), 16);
  v128.store(DIGEST3, bswapLanes(i32x4.add(a0, a3)));
  v128.store(DIGEST3, bswapLanes(i32x4.add(b0, b3)), 16);
  v128.store(DIGEST4, bswapLanes(i32x4.add(a0, a4)));
  v128.store(DIGEST4, bswapLanes(i32x4.add(b0, b4)), 16);
}

// @ts-ignore: decorator
@inline function md5Add(a: v128, f: v128, x: usize, k: v128): v128 {
  return i32x4.add(i32x4.add(a, f), i32x4.add(v128.load(x), k));
}

// One MD5 step of each round: b + rotl(a + f(b, c, d) + x + k, s), with s a constant once inlined.
// @ts-ignore: decorator
@inline function md5F(a: v128, b: v128, c: v128, d: v128, x: usize, k: v128, s: i32): v128 {
  return i32x4.add(b, rotl(md5Add(a, v128.bitselect(c, d, b), x, k), s));
}

// @ts-ignore: decorator
@inline function md5G(a: v128, b: v128, c: v128, d: v128, x: usize, k: v128, s: i32): v128 {
  return i32x4.add(b, rotl(md5Add(a, v128.bitselect(b, c, d), x, k), s));
}

// @ts-ignore: decorator
@inline function md5H(a: v128, b: v128, c: v128, d: v128, x: usize, k: v128, s: i32): v128 {
  return i32x4.add(b, rotl(md5Add(a, v128.xor(v128.xor(b, c), d), x, k), s));
}

// I = c ^ (b | ~d) = ~(c ^ (d & ~b)), so a + I + x + k = a - (c ^ (d & ~b)) + x + (k - 1): the constants
// of this round in MD5_K are k - 1.
// @ts-ignore: decorator
@inline function md5I(a: v128, b: v128, c: v128, d: v128, x: usize, k: v128, s: i32): v128 {
  return i32x4.add(b, rotl(md5Add(a, i32x4.neg(v128.xor(c, v128.andnot(d, b))), x, k), s));
}

// ---- SimHash over MD5 digests ----------------------------------------------------------------------

let pendingGroups = 0;

function simhashReset(): void {
  memory.fill(PACKED, 0, 16 * 8);
  memory.fill(COUNTS, 0, 16 * 64);
  pendingGroups = 0;
}

// Moves the packed 4-bit counters (at most 15 per lane each) into the 32-bit counts.
function simhashSpill(): void {
  for (let k = 0; k < 8; k++) {
    const p = v128.load(PACKED + (<usize>k << 4));
    const base = COUNTS + (<usize>k << 7);
    const nib = i32x4.splat(0xf);
    v128.store(base, i32x4.add(v128.load(base), v128.and(p, nib)));
    v128.store(base, i32x4.add(v128.load(base, 16), v128.and(i32x4.shr_u(p, 4), nib)), 16);
    v128.store(base, i32x4.add(v128.load(base, 32), v128.and(i32x4.shr_u(p, 8), nib)), 32);
    v128.store(base, i32x4.add(v128.load(base, 48), v128.and(i32x4.shr_u(p, 12), nib)), 48);
    v128.store(base, i32x4.add(v128.load(base, 64), v128.and(i32x4.shr_u(p, 16), nib)), 64);
    v128.store(base, i32x4.add(v128.load(base, 80), v128.and(i32x4.shr_u(p, 20), nib)), 80);
    v128.store(base, i32x4.add(v128.load(base, 96), v128.and(i32x4.shr_u(p, 24), nib)), 96);
    v128.store(base, i32x4.add(v128.load(base, 112), v128.and(i32x4.shr_u(p, 28), nib)), 112);
    v128.store(PACKED + (<usize>k << 4), i32x4.splat(0));
  }
  pendingGroups = 0;
}

// Counts the bits of the digests at `digest` (as DIGEST) of the first n lanes.
function simhashAddLanes(digest: usize, n: i32): void {
  const m = laneMask(n);
  const hi = v128.and(v128.load(digest), m);
  const lo = v128.and(v128.load(digest, 16), m);
  const ones = i32x4.splat(0x11111111);
  v128.store(PACKED, i32x4.add(v128.load(PACKED), v128.and(lo, ones)));
  v128.store(PACKED, i32x4.add(v128.load(PACKED, 16), v128.and(i32x4.shr_u(lo, 1), ones)), 16);
  v128.store(PACKED, i32x4.add(v128.load(PACKED, 32), v128.and(i32x4.shr_u(lo, 2), ones)), 32);
  v128.store(PACKED, i32x4.add(v128.load(PACKED, 48), v128.and(i32x4.shr_u(lo, 3), ones)), 48);
  v128.store(PACKED, i32x4.add(v128.load(PACKED, 64), v128.and(hi, ones)), 64);
  v128.store(PACKED, i32x4.add(v128.load(PACKED, 80), v128.and(i32x4.shr_u(hi, 1), ones)), 80);
  v128.store(PACKED, i32x4.add(v128.load(PACKED, 96), v128.and(i32x4.shr_u(hi, 2), ones)), 96);
  v128.store(PACKED, i32x4.add(v128.load(PACKED, 112), v128.and(i32x4.shr_u(hi, 3), ones)), 112);
  if (++pendingGroups == 15) simhashSpill();
}

// Bit i is set when more than half of `total` features have it (ties give 0), as simhash-py's compute.
function simhashResult(total: i32, out: usize): void {
  simhashSpill();
  let hi: u32 = 0, lo: u32 = 0;
  for (let k = 0; k < 8; k++) {
    for (let slot = 0; slot < 8; slot++) {
      const c = v128.load(COUNTS + (<usize>k << 7) + (<usize>slot << 4));
      const ones = i32x4.extract_lane(c, 0) + i32x4.extract_lane(c, 1) + i32x4.extract_lane(c, 2) + i32x4.extract_lane(c, 3);
      if (<i64>ones * 2 > <i64>total) {
        if (k < 4) lo |= <u32>1 << <u32>(k + 4 * slot);
        else hi |= <u32>1 << <u32>(k - 4 + 4 * slot);
      }
    }
  }
  store<u32>(out, hi);
  store<u32>(out, lo, 4);
}

const MODE_SIMHASH = 0;
const MODE_DIGESTS = 1;

// Writes the digests of the first n lanes of a group (DIGEST or DIGEST2) to out[ids[j]].
function md5Write(digest: usize, ids: usize, n: i32, out: usize): void {
  for (let j = 0; j < n; j++) {
    const dst = out + (<usize>load<i32>(ids + (<usize>j << 2)) << 3);
    store<u32>(dst, load<u32>(digest + (<usize>j << 2)));
    store<u32>(dst, load<u32>(digest + 16 + (<usize>j << 2)), 4);
  }
}

// The n (1 to 16) queued one-block messages.
function md5FlushShort(n: i32, mode: i32, out: usize): void {
  if (n <= 4) {
    // Too few for the 16 lanes (the end of a text, or a short text): the 4-lane kernel.
    md5Lanes(SHORT_PTR, SHORT_LEN, n);
    if (mode == MODE_SIMHASH) simhashAddLanes(DIGEST, n);
    else md5Write(DIGEST, SHORT_ID, n, out);
    return;
  }
  md5Short16(n);
  const n2 = n < 8 ? n - 4 : 4;
  const n3 = n < 12 ? n - 8 : 4;
  if (mode == MODE_SIMHASH) {
    simhashAddLanes(DIGEST, 4);
    simhashAddLanes(DIGEST2, n2);
    if (n > 8) simhashAddLanes(DIGEST3, n3);
    if (n > 12) simhashAddLanes(DIGEST4, n - 12);
  } else {
    md5Write(DIGEST, SHORT_ID, 4, out);
    md5Write(DIGEST2, SHORT_ID + 16, n2, out);
    if (n > 8) md5Write(DIGEST3, SHORT_ID + 32, n3, out);
    if (n > 12) md5Write(DIGEST4, SHORT_ID + 48, n - 12, out);
  }
}

// The n (1 to 4) queued longer messages.
function md5FlushLong(n: i32, mode: i32, out: usize): void {
  md5Lanes(LONG_PTR, LONG_LEN, n);
  if (mode == MODE_SIMHASH) simhashAddLanes(DIGEST, n);
  else md5Write(DIGEST, LONG_ID, n, out);
}

/**
 * MD5 over the features of a text whose words are the ranges [starts[i], ends[i]) of src: every run of
 * `window` consecutive words (one range of all the words if there are fewer), as near-dup's SimHash
 * features; window 1 makes the features the ranges themselves. MODE_SIMHASH writes the SimHash
 * (hi, lo) to out; MODE_DIGESTS writes each feature's first 8 digest bytes as big-endian (hi, lo).
 * Messages of one block (up to 55 bytes) are grouped apart from longer ones, so that a long message
 * does not hold three short ones for its extra blocks. Returns the number of features.
 */
function md5Features(src: usize, starts: usize, ends: usize, count: i32, window: i32, mode: i32, out: usize): i32 {
  let features = 0;
  if (count > 0) features = count <= window ? 1 : count - window + 1;
  const last = window <= count ? window - 1 : count - 1;
  if (mode == MODE_SIMHASH) simhashReset();
  let nShort = 0, nLong = 0;
  for (let i = 0; i < features; i++) {
    const s = load<i32>(starts + (<usize>i << 2));
    const e = load<i32>(ends + (<usize>(i + last) << 2));
    const len = e - s;
    if (len <= 55) {
      store<usize>(SHORT_PTR + (<usize>nShort << 2), src + <usize>s);
      store<i32>(SHORT_LEN + (<usize>nShort << 2), len);
      store<i32>(SHORT_ID + (<usize>nShort << 2), i);
      if (++nShort == 16) {
        md5FlushShort(16, mode, out);
        nShort = 0;
      }
    } else {
      store<usize>(LONG_PTR + (<usize>nLong << 2), src + <usize>s);
      store<i32>(LONG_LEN + (<usize>nLong << 2), len);
      store<i32>(LONG_ID + (<usize>nLong << 2), i);
      if (++nLong == 4) {
        md5FlushLong(4, mode, out);
        nLong = 0;
      }
    }
  }
  if (nShort > 0) md5FlushShort(nShort, mode, out);
  if (nLong > 0) md5FlushLong(nLong, mode, out);
  if (mode == MODE_SIMHASH) simhashResult(features, out);
  return features;
}

/** SimHash (hi, lo at out) of the word shingles of `window` words; returns the number of features. */
export function simhashShingles(src: usize, starts: usize, ends: usize, count: i32, window: i32, out: usize): i32 {
  return md5Features(src, starts, ends, count, window, MODE_SIMHASH, out);
}

/** The first 8 MD5 digest bytes of each range, as big-endian (hi, lo) pairs at out. */
export function md5Ranges(src: usize, starts: usize, ends: usize, count: i32, out: usize): void {
  md5Features(src, starts, ends, count, 1, MODE_DIGESTS, out);
}

// ---- SHA-1, four lanes -----------------------------------------------------------------------------

/** One SHA-1 compression of the four blocks in BLOCKS into DIGEST[0..4]; lanes where `mask` is 0 keep their state. */
function sha1Compress(mask: v128): void {
  const a0 = v128.load(DIGEST), b0 = v128.load(DIGEST, 16), c0 = v128.load(DIGEST, 32), d0 = v128.load(DIGEST, 48);
  const e0 = v128.load(DIGEST, 64);
  let t0: v128, t1: v128, t2: v128, t3: v128;
  let r0 = bswapLanes(row(0, 0)), r1 = bswapLanes(row(1, 0)), r2 = bswapLanes(row(2, 0)), r3 = bswapLanes(row(3, 0));
  t0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5); t1 = i32x4.shuffle(r0, r1, 2, 6, 3, 7);
  t2 = i32x4.shuffle(r2, r3, 0, 4, 1, 5); t3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
  let w0 = i32x4.shuffle(t0, t2, 0, 1, 4, 5), w1 = i32x4.shuffle(t0, t2, 2, 3, 6, 7);
  let w2 = i32x4.shuffle(t1, t3, 0, 1, 4, 5), w3 = i32x4.shuffle(t1, t3, 2, 3, 6, 7);
  r0 = bswapLanes(row(0, 1)); r1 = bswapLanes(row(1, 1)); r2 = bswapLanes(row(2, 1)); r3 = bswapLanes(row(3, 1));
  t0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5); t1 = i32x4.shuffle(r0, r1, 2, 6, 3, 7);
  t2 = i32x4.shuffle(r2, r3, 0, 4, 1, 5); t3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
  let w4 = i32x4.shuffle(t0, t2, 0, 1, 4, 5), w5 = i32x4.shuffle(t0, t2, 2, 3, 6, 7);
  let w6 = i32x4.shuffle(t1, t3, 0, 1, 4, 5), w7 = i32x4.shuffle(t1, t3, 2, 3, 6, 7);
  r0 = bswapLanes(row(0, 2)); r1 = bswapLanes(row(1, 2)); r2 = bswapLanes(row(2, 2)); r3 = bswapLanes(row(3, 2));
  t0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5); t1 = i32x4.shuffle(r0, r1, 2, 6, 3, 7);
  t2 = i32x4.shuffle(r2, r3, 0, 4, 1, 5); t3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
  let w8 = i32x4.shuffle(t0, t2, 0, 1, 4, 5), w9 = i32x4.shuffle(t0, t2, 2, 3, 6, 7);
  let w10 = i32x4.shuffle(t1, t3, 0, 1, 4, 5), w11 = i32x4.shuffle(t1, t3, 2, 3, 6, 7);
  r0 = bswapLanes(row(0, 3)); r1 = bswapLanes(row(1, 3)); r2 = bswapLanes(row(2, 3)); r3 = bswapLanes(row(3, 3));
  t0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5); t1 = i32x4.shuffle(r0, r1, 2, 6, 3, 7);
  t2 = i32x4.shuffle(r2, r3, 0, 4, 1, 5); t3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
  let w12 = i32x4.shuffle(t0, t2, 0, 1, 4, 5), w13 = i32x4.shuffle(t0, t2, 2, 3, 6, 7);
  let w14 = i32x4.shuffle(t1, t3, 0, 1, 4, 5), w15 = i32x4.shuffle(t1, t3, 2, 3, 6, 7);
  let a = a0, b = b0, c = c0, d = d0, e = e0;
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.bitselect(c, d, b)), i32x4.add(i32x4.add(e, w0), i32x4.splat(0x5a827999))); b = rotl(b, 30);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.bitselect(b, c, a)), i32x4.add(i32x4.add(d, w1), i32x4.splat(0x5a827999))); a = rotl(a, 30);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.bitselect(a, b, e)), i32x4.add(i32x4.add(c, w2), i32x4.splat(0x5a827999))); e = rotl(e, 30);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.bitselect(e, a, d)), i32x4.add(i32x4.add(b, w3), i32x4.splat(0x5a827999))); d = rotl(d, 30);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.bitselect(d, e, c)), i32x4.add(i32x4.add(a, w4), i32x4.splat(0x5a827999))); c = rotl(c, 30);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.bitselect(c, d, b)), i32x4.add(i32x4.add(e, w5), i32x4.splat(0x5a827999))); b = rotl(b, 30);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.bitselect(b, c, a)), i32x4.add(i32x4.add(d, w6), i32x4.splat(0x5a827999))); a = rotl(a, 30);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.bitselect(a, b, e)), i32x4.add(i32x4.add(c, w7), i32x4.splat(0x5a827999))); e = rotl(e, 30);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.bitselect(e, a, d)), i32x4.add(i32x4.add(b, w8), i32x4.splat(0x5a827999))); d = rotl(d, 30);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.bitselect(d, e, c)), i32x4.add(i32x4.add(a, w9), i32x4.splat(0x5a827999))); c = rotl(c, 30);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.bitselect(c, d, b)), i32x4.add(i32x4.add(e, w10), i32x4.splat(0x5a827999))); b = rotl(b, 30);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.bitselect(b, c, a)), i32x4.add(i32x4.add(d, w11), i32x4.splat(0x5a827999))); a = rotl(a, 30);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.bitselect(a, b, e)), i32x4.add(i32x4.add(c, w12), i32x4.splat(0x5a827999))); e = rotl(e, 30);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.bitselect(e, a, d)), i32x4.add(i32x4.add(b, w13), i32x4.splat(0x5a827999))); d = rotl(d, 30);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.bitselect(d, e, c)), i32x4.add(i32x4.add(a, w14), i32x4.splat(0x5a827999))); c = rotl(c, 30);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.bitselect(c, d, b)), i32x4.add(i32x4.add(e, w15), i32x4.splat(0x5a827999))); b = rotl(b, 30);
  w0 = rotl(v128.xor(v128.xor(w13, w8), v128.xor(w2, w0)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.bitselect(b, c, a)), i32x4.add(i32x4.add(d, w0), i32x4.splat(0x5a827999))); a = rotl(a, 30);
  w1 = rotl(v128.xor(v128.xor(w14, w9), v128.xor(w3, w1)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.bitselect(a, b, e)), i32x4.add(i32x4.add(c, w1), i32x4.splat(0x5a827999))); e = rotl(e, 30);
  w2 = rotl(v128.xor(v128.xor(w15, w10), v128.xor(w4, w2)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.bitselect(e, a, d)), i32x4.add(i32x4.add(b, w2), i32x4.splat(0x5a827999))); d = rotl(d, 30);
  w3 = rotl(v128.xor(v128.xor(w0, w11), v128.xor(w5, w3)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.bitselect(d, e, c)), i32x4.add(i32x4.add(a, w3), i32x4.splat(0x5a827999))); c = rotl(c, 30);
  w4 = rotl(v128.xor(v128.xor(w1, w12), v128.xor(w6, w4)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, w4), i32x4.splat(0x6ed9eba1))); b = rotl(b, 30);
  w5 = rotl(v128.xor(v128.xor(w2, w13), v128.xor(w7, w5)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.xor(v128.xor(a, b), c)), i32x4.add(i32x4.add(d, w5), i32x4.splat(0x6ed9eba1))); a = rotl(a, 30);
  w6 = rotl(v128.xor(v128.xor(w3, w14), v128.xor(w8, w6)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.xor(v128.xor(e, a), b)), i32x4.add(i32x4.add(c, w6), i32x4.splat(0x6ed9eba1))); e = rotl(e, 30);
  w7 = rotl(v128.xor(v128.xor(w4, w15), v128.xor(w9, w7)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.xor(v128.xor(d, e), a)), i32x4.add(i32x4.add(b, w7), i32x4.splat(0x6ed9eba1))); d = rotl(d, 30);
  w8 = rotl(v128.xor(v128.xor(w5, w0), v128.xor(w10, w8)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.xor(v128.xor(c, d), e)), i32x4.add(i32x4.add(a, w8), i32x4.splat(0x6ed9eba1))); c = rotl(c, 30);
  w9 = rotl(v128.xor(v128.xor(w6, w1), v128.xor(w11, w9)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, w9), i32x4.splat(0x6ed9eba1))); b = rotl(b, 30);
  w10 = rotl(v128.xor(v128.xor(w7, w2), v128.xor(w12, w10)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.xor(v128.xor(a, b), c)), i32x4.add(i32x4.add(d, w10), i32x4.splat(0x6ed9eba1))); a = rotl(a, 30);
  w11 = rotl(v128.xor(v128.xor(w8, w3), v128.xor(w13, w11)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.xor(v128.xor(e, a), b)), i32x4.add(i32x4.add(c, w11), i32x4.splat(0x6ed9eba1))); e = rotl(e, 30);
  w12 = rotl(v128.xor(v128.xor(w9, w4), v128.xor(w14, w12)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.xor(v128.xor(d, e), a)), i32x4.add(i32x4.add(b, w12), i32x4.splat(0x6ed9eba1))); d = rotl(d, 30);
  w13 = rotl(v128.xor(v128.xor(w10, w5), v128.xor(w15, w13)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.xor(v128.xor(c, d), e)), i32x4.add(i32x4.add(a, w13), i32x4.splat(0x6ed9eba1))); c = rotl(c, 30);
  w14 = rotl(v128.xor(v128.xor(w11, w6), v128.xor(w0, w14)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, w14), i32x4.splat(0x6ed9eba1))); b = rotl(b, 30);
  w15 = rotl(v128.xor(v128.xor(w12, w7), v128.xor(w1, w15)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.xor(v128.xor(a, b), c)), i32x4.add(i32x4.add(d, w15), i32x4.splat(0x6ed9eba1))); a = rotl(a, 30);
  w0 = rotl(v128.xor(v128.xor(w13, w8), v128.xor(w2, w0)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.xor(v128.xor(e, a), b)), i32x4.add(i32x4.add(c, w0), i32x4.splat(0x6ed9eba1))); e = rotl(e, 30);
  w1 = rotl(v128.xor(v128.xor(w14, w9), v128.xor(w3, w1)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.xor(v128.xor(d, e), a)), i32x4.add(i32x4.add(b, w1), i32x4.splat(0x6ed9eba1))); d = rotl(d, 30);
  w2 = rotl(v128.xor(v128.xor(w15, w10), v128.xor(w4, w2)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.xor(v128.xor(c, d), e)), i32x4.add(i32x4.add(a, w2), i32x4.splat(0x6ed9eba1))); c = rotl(c, 30);
  w3 = rotl(v128.xor(v128.xor(w0, w11), v128.xor(w5, w3)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, w3), i32x4.splat(0x6ed9eba1))); b = rotl(b, 30);
  w4 = rotl(v128.xor(v128.xor(w1, w12), v128.xor(w6, w4)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.xor(v128.xor(a, b), c)), i32x4.add(i32x4.add(d, w4), i32x4.splat(0x6ed9eba1))); a = rotl(a, 30);
  w5 = rotl(v128.xor(v128.xor(w2, w13), v128.xor(w7, w5)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.xor(v128.xor(e, a), b)), i32x4.add(i32x4.add(c, w5), i32x4.splat(0x6ed9eba1))); e = rotl(e, 30);
  w6 = rotl(v128.xor(v128.xor(w3, w14), v128.xor(w8, w6)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.xor(v128.xor(d, e), a)), i32x4.add(i32x4.add(b, w6), i32x4.splat(0x6ed9eba1))); d = rotl(d, 30);
  w7 = rotl(v128.xor(v128.xor(w4, w15), v128.xor(w9, w7)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.xor(v128.xor(c, d), e)), i32x4.add(i32x4.add(a, w7), i32x4.splat(0x6ed9eba1))); c = rotl(c, 30);
  w8 = rotl(v128.xor(v128.xor(w5, w0), v128.xor(w10, w8)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.bitselect(c, b, v128.xor(b, d))), i32x4.add(i32x4.add(e, w8), i32x4.splat(0x8f1bbcdc))); b = rotl(b, 30);
  w9 = rotl(v128.xor(v128.xor(w6, w1), v128.xor(w11, w9)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.bitselect(b, a, v128.xor(a, c))), i32x4.add(i32x4.add(d, w9), i32x4.splat(0x8f1bbcdc))); a = rotl(a, 30);
  w10 = rotl(v128.xor(v128.xor(w7, w2), v128.xor(w12, w10)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.bitselect(a, e, v128.xor(e, b))), i32x4.add(i32x4.add(c, w10), i32x4.splat(0x8f1bbcdc))); e = rotl(e, 30);
  w11 = rotl(v128.xor(v128.xor(w8, w3), v128.xor(w13, w11)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.bitselect(e, d, v128.xor(d, a))), i32x4.add(i32x4.add(b, w11), i32x4.splat(0x8f1bbcdc))); d = rotl(d, 30);
  w12 = rotl(v128.xor(v128.xor(w9, w4), v128.xor(w14, w12)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.bitselect(d, c, v128.xor(c, e))), i32x4.add(i32x4.add(a, w12), i32x4.splat(0x8f1bbcdc))); c = rotl(c, 30);
  w13 = rotl(v128.xor(v128.xor(w10, w5), v128.xor(w15, w13)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.bitselect(c, b, v128.xor(b, d))), i32x4.add(i32x4.add(e, w13), i32x4.splat(0x8f1bbcdc))); b = rotl(b, 30);
  w14 = rotl(v128.xor(v128.xor(w11, w6), v128.xor(w0, w14)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.bitselect(b, a, v128.xor(a, c))), i32x4.add(i32x4.add(d, w14), i32x4.splat(0x8f1bbcdc))); a = rotl(a, 30);
  w15 = rotl(v128.xor(v128.xor(w12, w7), v128.xor(w1, w15)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.bitselect(a, e, v128.xor(e, b))), i32x4.add(i32x4.add(c, w15), i32x4.splat(0x8f1bbcdc))); e = rotl(e, 30);
  w0 = rotl(v128.xor(v128.xor(w13, w8), v128.xor(w2, w0)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.bitselect(e, d, v128.xor(d, a))), i32x4.add(i32x4.add(b, w0), i32x4.splat(0x8f1bbcdc))); d = rotl(d, 30);
  w1 = rotl(v128.xor(v128.xor(w14, w9), v128.xor(w3, w1)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.bitselect(d, c, v128.xor(c, e))), i32x4.add(i32x4.add(a, w1), i32x4.splat(0x8f1bbcdc))); c = rotl(c, 30);
  w2 = rotl(v128.xor(v128.xor(w15, w10), v128.xor(w4, w2)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.bitselect(c, b, v128.xor(b, d))), i32x4.add(i32x4.add(e, w2), i32x4.splat(0x8f1bbcdc))); b = rotl(b, 30);
  w3 = rotl(v128.xor(v128.xor(w0, w11), v128.xor(w5, w3)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.bitselect(b, a, v128.xor(a, c))), i32x4.add(i32x4.add(d, w3), i32x4.splat(0x8f1bbcdc))); a = rotl(a, 30);
  w4 = rotl(v128.xor(v128.xor(w1, w12), v128.xor(w6, w4)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.bitselect(a, e, v128.xor(e, b))), i32x4.add(i32x4.add(c, w4), i32x4.splat(0x8f1bbcdc))); e = rotl(e, 30);
  w5 = rotl(v128.xor(v128.xor(w2, w13), v128.xor(w7, w5)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.bitselect(e, d, v128.xor(d, a))), i32x4.add(i32x4.add(b, w5), i32x4.splat(0x8f1bbcdc))); d = rotl(d, 30);
  w6 = rotl(v128.xor(v128.xor(w3, w14), v128.xor(w8, w6)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.bitselect(d, c, v128.xor(c, e))), i32x4.add(i32x4.add(a, w6), i32x4.splat(0x8f1bbcdc))); c = rotl(c, 30);
  w7 = rotl(v128.xor(v128.xor(w4, w15), v128.xor(w9, w7)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.bitselect(c, b, v128.xor(b, d))), i32x4.add(i32x4.add(e, w7), i32x4.splat(0x8f1bbcdc))); b = rotl(b, 30);
  w8 = rotl(v128.xor(v128.xor(w5, w0), v128.xor(w10, w8)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.bitselect(b, a, v128.xor(a, c))), i32x4.add(i32x4.add(d, w8), i32x4.splat(0x8f1bbcdc))); a = rotl(a, 30);
  w9 = rotl(v128.xor(v128.xor(w6, w1), v128.xor(w11, w9)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.bitselect(a, e, v128.xor(e, b))), i32x4.add(i32x4.add(c, w9), i32x4.splat(0x8f1bbcdc))); e = rotl(e, 30);
  w10 = rotl(v128.xor(v128.xor(w7, w2), v128.xor(w12, w10)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.bitselect(e, d, v128.xor(d, a))), i32x4.add(i32x4.add(b, w10), i32x4.splat(0x8f1bbcdc))); d = rotl(d, 30);
  w11 = rotl(v128.xor(v128.xor(w8, w3), v128.xor(w13, w11)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.bitselect(d, c, v128.xor(c, e))), i32x4.add(i32x4.add(a, w11), i32x4.splat(0x8f1bbcdc))); c = rotl(c, 30);
  w12 = rotl(v128.xor(v128.xor(w9, w4), v128.xor(w14, w12)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, w12), i32x4.splat(0xca62c1d6))); b = rotl(b, 30);
  w13 = rotl(v128.xor(v128.xor(w10, w5), v128.xor(w15, w13)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.xor(v128.xor(a, b), c)), i32x4.add(i32x4.add(d, w13), i32x4.splat(0xca62c1d6))); a = rotl(a, 30);
  w14 = rotl(v128.xor(v128.xor(w11, w6), v128.xor(w0, w14)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.xor(v128.xor(e, a), b)), i32x4.add(i32x4.add(c, w14), i32x4.splat(0xca62c1d6))); e = rotl(e, 30);
  w15 = rotl(v128.xor(v128.xor(w12, w7), v128.xor(w1, w15)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.xor(v128.xor(d, e), a)), i32x4.add(i32x4.add(b, w15), i32x4.splat(0xca62c1d6))); d = rotl(d, 30);
  w0 = rotl(v128.xor(v128.xor(w13, w8), v128.xor(w2, w0)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.xor(v128.xor(c, d), e)), i32x4.add(i32x4.add(a, w0), i32x4.splat(0xca62c1d6))); c = rotl(c, 30);
  w1 = rotl(v128.xor(v128.xor(w14, w9), v128.xor(w3, w1)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, w1), i32x4.splat(0xca62c1d6))); b = rotl(b, 30);
  w2 = rotl(v128.xor(v128.xor(w15, w10), v128.xor(w4, w2)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.xor(v128.xor(a, b), c)), i32x4.add(i32x4.add(d, w2), i32x4.splat(0xca62c1d6))); a = rotl(a, 30);
  w3 = rotl(v128.xor(v128.xor(w0, w11), v128.xor(w5, w3)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.xor(v128.xor(e, a), b)), i32x4.add(i32x4.add(c, w3), i32x4.splat(0xca62c1d6))); e = rotl(e, 30);
  w4 = rotl(v128.xor(v128.xor(w1, w12), v128.xor(w6, w4)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.xor(v128.xor(d, e), a)), i32x4.add(i32x4.add(b, w4), i32x4.splat(0xca62c1d6))); d = rotl(d, 30);
  w5 = rotl(v128.xor(v128.xor(w2, w13), v128.xor(w7, w5)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.xor(v128.xor(c, d), e)), i32x4.add(i32x4.add(a, w5), i32x4.splat(0xca62c1d6))); c = rotl(c, 30);
  w6 = rotl(v128.xor(v128.xor(w3, w14), v128.xor(w8, w6)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, w6), i32x4.splat(0xca62c1d6))); b = rotl(b, 30);
  w7 = rotl(v128.xor(v128.xor(w4, w15), v128.xor(w9, w7)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.xor(v128.xor(a, b), c)), i32x4.add(i32x4.add(d, w7), i32x4.splat(0xca62c1d6))); a = rotl(a, 30);
  w8 = rotl(v128.xor(v128.xor(w5, w0), v128.xor(w10, w8)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.xor(v128.xor(e, a), b)), i32x4.add(i32x4.add(c, w8), i32x4.splat(0xca62c1d6))); e = rotl(e, 30);
  w9 = rotl(v128.xor(v128.xor(w6, w1), v128.xor(w11, w9)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.xor(v128.xor(d, e), a)), i32x4.add(i32x4.add(b, w9), i32x4.splat(0xca62c1d6))); d = rotl(d, 30);
  w10 = rotl(v128.xor(v128.xor(w7, w2), v128.xor(w12, w10)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.xor(v128.xor(c, d), e)), i32x4.add(i32x4.add(a, w10), i32x4.splat(0xca62c1d6))); c = rotl(c, 30);
  w11 = rotl(v128.xor(v128.xor(w8, w3), v128.xor(w13, w11)), 1);
  e = i32x4.add(i32x4.add(rotl(a, 5), v128.xor(v128.xor(b, c), d)), i32x4.add(i32x4.add(e, w11), i32x4.splat(0xca62c1d6))); b = rotl(b, 30);
  w12 = rotl(v128.xor(v128.xor(w9, w4), v128.xor(w14, w12)), 1);
  d = i32x4.add(i32x4.add(rotl(e, 5), v128.xor(v128.xor(a, b), c)), i32x4.add(i32x4.add(d, w12), i32x4.splat(0xca62c1d6))); a = rotl(a, 30);
  w13 = rotl(v128.xor(v128.xor(w10, w5), v128.xor(w15, w13)), 1);
  c = i32x4.add(i32x4.add(rotl(d, 5), v128.xor(v128.xor(e, a), b)), i32x4.add(i32x4.add(c, w13), i32x4.splat(0xca62c1d6))); e = rotl(e, 30);
  w14 = rotl(v128.xor(v128.xor(w11, w6), v128.xor(w0, w14)), 1);
  b = i32x4.add(i32x4.add(rotl(c, 5), v128.xor(v128.xor(d, e), a)), i32x4.add(i32x4.add(b, w14), i32x4.splat(0xca62c1d6))); d = rotl(d, 30);
  w15 = rotl(v128.xor(v128.xor(w12, w7), v128.xor(w1, w15)), 1);
  a = i32x4.add(i32x4.add(rotl(b, 5), v128.xor(v128.xor(c, d), e)), i32x4.add(i32x4.add(a, w15), i32x4.splat(0xca62c1d6))); c = rotl(c, 30);
  v128.store(DIGEST, v128.bitselect(i32x4.add(a0, a), a0, mask));
  v128.store(DIGEST, v128.bitselect(i32x4.add(b0, b), b0, mask), 16);
  v128.store(DIGEST, v128.bitselect(i32x4.add(c0, c), c0, mask), 32);
  v128.store(DIGEST, v128.bitselect(i32x4.add(d0, d), d0, mask), 48);
  v128.store(DIGEST, v128.bitselect(i32x4.add(e0, e), e0, mask), 64);
}

/** SHA-1 of the n (1 to 4) messages in ptrs/lens; leaves the first digest word of each in DIGEST vector 0. */
function sha1Lanes(ptrs: usize, lens: usize, n: i32): void {
  v128.store(DIGEST, i32x4.splat(0x67452301));
  v128.store(DIGEST, i32x4.splat(0xefcdab89), 16);
  v128.store(DIGEST, i32x4.splat(0x98badcfe), 32);
  v128.store(DIGEST, i32x4.splat(0x10325476), 48);
  v128.store(DIGEST, i32x4.splat(0xc3d2e1f0), 64);
  let blocks = 0;
  const counts = i32x4(
    n > 0 ? blockCount(load<i32>(lens)) : 0,
    n > 1 ? blockCount(load<i32>(lens, 4)) : 0,
    n > 2 ? blockCount(load<i32>(lens, 8)) : 0,
    n > 3 ? blockCount(load<i32>(lens, 12)) : 0,
  );
  for (let j = 0; j < n; j++) {
    const c = blockCount(load<i32>(lens + (<usize>j << 2)));
    if (c > blocks) blocks = c;
  }
  for (let blk = 0; blk < blocks; blk++) {
    for (let j = 0; j < n; j++) {
      const len = load<i32>(lens + (<usize>j << 2));
      if (blk < blockCount(len)) loadBlock(j, load<usize>(ptrs + (<usize>j << 2)), len, blk, true);
    }
    sha1Compress(blk == 0 ? i32x4.splat(-1) : i32x4.gt_s(counts, i32x4.splat(blk)));
  }
}

/** The first SHA-1 digest word (big-endian value) of each range, at out. For the tests. */
export function sha1Ranges(src: usize, starts: usize, ends: usize, count: i32, out: usize): void {
  let n = 0;
  for (let i = 0; i < count; i++) {
    const s = load<i32>(starts + (<usize>i << 2));
    store<usize>(LANE_PTR + (<usize>n << 2), src + <usize>s);
    store<i32>(LANE_LEN + (<usize>n << 2), load<i32>(ends + (<usize>i << 2)) - s);
    store<i32>(LANE_ID + (<usize>n << 2), i);
    if (++n == 4 || i == count - 1) {
      sha1Lanes(LANE_PTR, LANE_LEN, n);
      for (let j = 0; j < n; j++) {
        store<u32>(out + (<usize>load<i32>(LANE_ID + (<usize>j << 2)) << 2), load<u32>(DIGEST + (<usize>j << 2)));
      }
      n = 0;
    }
  }
}

// ---- token hashes: datasketch sha1_hash32, memoized -----------------------------------------------

// The first n (0 to 8) bytes at ptr as a little-endian u64, zero above; reads 8 bytes (the arena
// keeps slack after every allocation for that).
// @ts-ignore: decorator
@inline function wordPrefix(ptr: usize, n: i32): u64 {
  if (n <= 0) return 0;
  const w = load<u64>(ptr);
  return n >= 8 ? w : w & ((<u64>1 << (<u64>n << 3)) - 1);
}

// Token hashes computed for pending lanes go to out[id] and, for short tokens, into the memo: the first
// way of their set, its entry moved to the second.
function sha1FlushTokens(n: i32, out: usize): void {
  sha1Lanes(LANE_PTR, LANE_LEN, n);
  for (let j = 0; j < n; j++) {
    const value = bswap<u32>(load<u32>(DIGEST + (<usize>j << 2)));
    store<u32>(out + (<usize>load<i32>(LANE_ID + (<usize>j << 2)) << 2), value);
    const len = load<i32>(LANE_LEN + (<usize>j << 2));
    if (len <= MEMO_KEY_BYTES) {
      const set = load<usize>(LONG_ID + (<usize>j << 2)); // the memo set, found when queued
      const ptr = load<usize>(LANE_PTR + (<usize>j << 2));
      v128.store(set, v128.load(set), 32);
      v128.store(set, v128.load(set, 16), 48);
      store<u64>(set, wordPrefix(ptr, len));
      store<u64>(set, wordPrefix(ptr + 8, len - 8), 8);
      store<u64>(set, wordPrefix(ptr + 16, len - 16), 16);
      store<i32>(set, len + 1, 24);
      store<u32>(set, value, 28);
    }
  }
}

/**
 * datasketch's sha1_hash32 (the first 4 SHA-1 digest bytes read little-endian) of each range, at out.
 * Tokens of up to 24 bytes are memoized across calls (a two-way table, its set chosen by a multiplicative
 * hash of the bytes, which it stores zero-padded: an entry answers only for the very same bytes; a hit in
 * the second way moves it to the first); the others are hashed four at a time.
 */
export function tokenHashesSha1(src: usize, starts: usize, ends: usize, count: i32, out: usize): void {
  let n = 0;
  for (let i = 0; i < count; i++) {
    const s = load<i32>(starts + (<usize>i << 2));
    const len = load<i32>(ends + (<usize>i << 2)) - s;
    const ptr = src + <usize>s;
    let set: usize = 0;
    if (len <= MEMO_KEY_BYTES) {
      const w0 = wordPrefix(ptr, len);
      const w1 = len > 8 ? wordPrefix(ptr + 8, len - 8) : 0;
      const w2 = len > 16 ? wordPrefix(ptr + 16, len - 16) : 0;
      const h = (w0 ^ (w1 * 0x9e3779b97f4a7c15) ^ (w2 * 0xc2b2ae3d27d4eb4f) ^ <u64>len) * 0xff51afd7ed558ccd;
      set = memo + (<usize>(<i32>(h >> 48) & MEMO_SET_MASK) << 6);
      if (load<i32>(set, 24) == len + 1 && load<u64>(set) == w0 && load<u64>(set, 8) == w1 && load<u64>(set, 16) == w2) {
        store<u32>(out + (<usize>i << 2), load<u32>(set, 28));
        continue;
      }
      if (load<i32>(set, 56) == len + 1 && load<u64>(set, 32) == w0 && load<u64>(set, 40) == w1 && load<u64>(set, 48) == w2) {
        store<u32>(out + (<usize>i << 2), load<u32>(set, 60));
        const a = v128.load(set), b = v128.load(set, 16);
        v128.store(set, v128.load(set, 32));
        v128.store(set, v128.load(set, 48), 16);
        v128.store(set, a, 32);
        v128.store(set, b, 48);
        continue;
      }
    }
    store<usize>(LANE_PTR + (<usize>n << 2), ptr);
    store<i32>(LANE_LEN + (<usize>n << 2), len);
    store<i32>(LANE_ID + (<usize>n << 2), i);
    store<usize>(LONG_ID + (<usize>n << 2), set);
    if (++n == 4) {
      sha1FlushTokens(4, out);
      n = 0;
    }
  }
  if (n > 0) sha1FlushTokens(n, out);
}

// ---- token hashes: MurmurHash3 and CRC-32 -----------------------------------------------------------

// @ts-ignore: decorator
@inline function rotl32(x: u32, n: u32): u32 {
  return (x << n) | (x >> (32 - n));
}

/**
 * MurmurHash3 x86 32-bit, seed 0, of each range, at out: Python's mmh3.hash(token, 0, signed=False). Cheap
 * enough on words that a memo would cost about what it saves.
 */
export function tokenHashesMmh3(src: usize, starts: usize, ends: usize, count: i32, out: usize): void {
  for (let i = 0; i < count; i++) {
    const s = load<i32>(starts + (<usize>i << 2));
    const len = load<i32>(ends + (<usize>i << 2)) - s;
    const ptr = src + <usize>s;
    let h: u32 = 0;
    const body = len & ~3;
    for (let j = 0; j < body; j += 4) {
      h ^= rotl32(load<u32>(ptr + <usize>j) * 0xcc9e2d51, 15) * 0x1b873593;
      h = rotl32(h, 13) * 5 + 0xe6546b64;
    }
    // The 0 to 3 bytes left, read as one word (the arena keeps slack after every range) and masked: no
    // branch on the length, which words make unpredictable. No bytes mix in as 0, which changes nothing.
    const k = load<u32>(ptr + <usize>body) & <u32>((<u64>1 << (<u64>(len & 3) << 3)) - 1);
    h ^= rotl32(k * 0xcc9e2d51, 15) * 0x1b873593;
    h ^= <u32>len;
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    store<u32>(out + (<usize>i << 2), h ^ (h >> 16));
  }
}

// zlib's CRC-32 table (reflected polynomial 0xedb88320), filled on first use.
const CRC_TABLE: usize = memory.data(1024, 16);
let crcTableReady = false;

function fillCrcTable(): void {
  for (let n: u32 = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = (c & 1) != 0 ? 0xedb88320 ^ (c >> 1) : c >> 1;
    store<u32>(CRC_TABLE + (<usize>n << 2), c);
  }
  crcTableReady = true;
}

/** zlib's CRC-32 of each range, at out: Python's zlib.crc32(token). */
export function tokenHashesCrc32(src: usize, starts: usize, ends: usize, count: i32, out: usize): void {
  if (!crcTableReady) fillCrcTable();
  for (let i = 0; i < count; i++) {
    const s = load<i32>(starts + (<usize>i << 2));
    const e = load<i32>(ends + (<usize>i << 2));
    let c: u32 = 0xffffffff;
    for (let j = s; j < e; j++) c = load<u32>(CRC_TABLE + (<usize>((c ^ <u32>load<u8>(src + <usize>j)) & 0xff) << 2)) ^ (c >> 8);
    store<u32>(out + (<usize>i << 2), ~c);
  }
}

// ---- distinct values and MinHash -------------------------------------------------------------------

/**
 * Keeps the first occurrence of each value of values[0, count) in place, in order; returns how many
 * remain. `table` has room for `slots` (a power of two, at least 2 * count) u32 values and as many
 * occupancy bytes after them. A value's place comes from a mix of it with `key` (random per process), so
 * that no document can choose hashes that all land together and make the probing quadratic.
 */
export function distinctInPlace(values: usize, count: i32, table: usize, slots: i32, key: u32): i32 {
  const used = table + (<usize>slots << 2);
  memory.fill(used, 0, <usize>slots);
  const mask = <u32>(slots - 1);
  let size = 0;
  for (let i = 0; i < count; i++) {
    const v = load<u32>(values + (<usize>i << 2));
    let x = v ^ key;
    x ^= x >> 16;
    x *= 0x85ebca6b;
    x ^= x >> 13;
    x *= 0xc2b2ae35;
    x ^= x >> 16;
    let slot = x & mask;
    let found = false;
    while (load<u8>(used + <usize>slot) != 0) {
      if (load<u32>(table + (<usize>slot << 2)) == v) {
        found = true;
        break;
      }
      slot = (slot + 1) & mask;
    }
    if (found) continue;
    store<u8>(used + <usize>slot, 1);
    store<u32>(table + (<usize>slot << 2), v);
    store<u32>(values + (<usize>size << 2), v);
    size++;
  }
  return size;
}

/**
 * datasketch's affine32 MinHash update: for each hash h of hashes[0, count), fmix32(h) = x and, for
 * every permutation i, values[i] = min(values[i], a[i] * x + b[i] mod 2^32). `perms` is a multiple of
 * 16 (the caller pads a, b and values). The hashes are overwritten with their fmix32.
 */
export function minhashAffine32(values: usize, a: usize, b: usize, perms: i32, hashes: usize, count: i32): void {
  let i = 0;
  for (; i + 4 <= count; i += 4) {
    const p = hashes + (<usize>i << 2);
    let h = v128.load(p);
    h = v128.xor(h, i32x4.shr_u(h, 16));
    h = i32x4.mul(h, i32x4.splat(0x85ebca6b));
    h = v128.xor(h, i32x4.shr_u(h, 13));
    h = i32x4.mul(h, i32x4.splat(0xc2b2ae35));
    v128.store(p, v128.xor(h, i32x4.shr_u(h, 16)));
  }
  for (; i < count; i++) {
    const p = hashes + (<usize>i << 2);
    let h = load<u32>(p);
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    store<u32>(p, h ^ (h >>> 16));
  }
  // 16 permutations at a time, their coefficients and minima in registers, over all hashes.
  for (let q = 0; q < perms; q += 16) {
    const off = <usize>q << 2;
    const a0 = v128.load(a + off), a1 = v128.load(a + off, 16), a2 = v128.load(a + off, 32), a3 = v128.load(a + off, 48);
    const b0 = v128.load(b + off), b1 = v128.load(b + off, 16), b2 = v128.load(b + off, 32), b3 = v128.load(b + off, 48);
    let m0 = v128.load(values + off), m1 = v128.load(values + off, 16);
    let m2 = v128.load(values + off, 32), m3 = v128.load(values + off, 48);
    for (let t = 0; t < count; t++) {
      const x = v128.load32_splat(hashes + (<usize>t << 2));
      m0 = i32x4.min_u(m0, i32x4.add(i32x4.mul(a0, x), b0));
      m1 = i32x4.min_u(m1, i32x4.add(i32x4.mul(a1, x), b1));
      m2 = i32x4.min_u(m2, i32x4.add(i32x4.mul(a2, x), b2));
      m3 = i32x4.min_u(m3, i32x4.add(i32x4.mul(a3, x), b3));
    }
    v128.store(values + off, m0);
    v128.store(values + off, m1, 16);
    v128.store(values + off, m2, 32);
    v128.store(values + off, m3, 48);
  }
}

// ---- word layout -----------------------------------------------------------------------------------

// Python's str.isspace() in the ASCII range: 9-13, 28-32.
const ASCII_SPACES: u64 = (<u64>0x1f << 9) | (<u64>0x1f << 28);

/**
 * The words of the ASCII text [ptr, ptr + len), as Python's str.split() finds them, joined by single
 * spaces in place (the text only ever moves left); word i is [starts[i], ends[i]) relative to ptr.
 * Returns the number of words. (src/text/token-ranges.ts layoutWords is the reference.)
 */
export function layoutAsciiWords(ptr: usize, len: i32, starts: usize, ends: usize): i32 {
  const laid = layoutCleanWords(ptr, len, starts, ends);
  return laid >= 0 ? laid : layoutAnyWords(ptr, len, starts, ends);
}

/**
 * The words of a text that is laid out already (words joined by single spaces, as the normalizers
 * leave it): word ranges from the spaces, 16 bytes at a time. Returns -1, having changed nothing
 * but starts and ends, for any other text.
 */
function layoutCleanWords(ptr: usize, len: i32, starts: usize, ends: usize): i32 {
  let ns = 0, ne = 0;
  let prevSpace: u32 = 1; // the start of the text counts as a space: a leading space is not clean
  let i = 0;
  const space = i8x16.splat(32);
  for (; i + 16 <= len; i += 16) {
    const v = v128.load(ptr + <usize>i);
    const other = v128.or(
      i8x16.lt_u(i8x16.sub(v, i8x16.splat(9)), i8x16.splat(5)),
      i8x16.lt_u(i8x16.sub(v, i8x16.splat(28)), i8x16.splat(4)),
    );
    if (v128.any_true(other)) return -1;
    const sp = <u32>i8x16.bitmask(i8x16.eq(v, space));
    const prev = (sp << 1) | prevSpace;
    if ((sp & prev) != 0) return -1;
    let startBits = ~sp & prev & 0xffff;
    while (startBits != 0) {
      store<i32>(starts + (<usize>(ns++) << 2), i + <i32>ctz(startBits));
      startBits &= startBits - 1;
    }
    let endBits = sp;
    while (endBits != 0) {
      store<i32>(ends + (<usize>(ne++) << 2), i + <i32>ctz(endBits));
      endBits &= endBits - 1;
    }
    prevSpace = sp >> 15;
  }
  for (; i < len; i++) {
    const c = <u32>load<u8>(ptr + <usize>i);
    if (c <= 31 && ((ASCII_SPACES >> <u64>c) & 1) != 0) return -1;
    const sp: u32 = c == 32 ? 1 : 0;
    if ((sp & prevSpace) != 0) return -1;
    if (sp == 0 && prevSpace != 0) store<i32>(starts + (<usize>(ns++) << 2), i);
    if (sp != 0) store<i32>(ends + (<usize>(ne++) << 2), i);
    prevSpace = sp;
  }
  if (len > 0) {
    if (prevSpace != 0) return -1; // a trailing space
    store<i32>(ends + (<usize>(ne++) << 2), len);
  }
  return ns;
}

// Any ASCII text: spaces of every kind, runs of them, at either end.
function layoutAnyWords(ptr: usize, len: i32, starts: usize, ends: usize): i32 {
  let pos = 0, count = 0, i = 0;
  while (i < len) {
    // Skip spaces.
    let c = <u32>load<u8>(ptr + <usize>i);
    while (c <= 32 && ((ASCII_SPACES >> <u64>c) & 1) != 0) {
      if (++i == len) return count;
      c = <u32>load<u8>(ptr + <usize>i);
    }
    if (count > 0) store<u8>(ptr + <usize>(pos++), 32);
    store<i32>(starts + (<usize>count << 2), pos);
    // Copy the word (in place while nothing has been dropped).
    if (pos == i) {
      do {
        if (++i == len) break;
        c = <u32>load<u8>(ptr + <usize>i);
      } while (c > 32 || ((ASCII_SPACES >> <u64>c) & 1) == 0);
      pos = i;
    } else {
      do {
        store<u8>(ptr + <usize>(pos++), <u8>c);
        if (++i == len) break;
        c = <u32>load<u8>(ptr + <usize>i);
      } while (c > 32 || ((ASCII_SPACES >> <u64>c) & 1) == 0);
    }
    store<i32>(ends + (<usize>count << 2), pos);
    count++;
  }
  return count;
}

// ---- ASCII folding (the last step of the normalizer) -----------------------------------------------

/**
 * src/text/normalize.ts foldAscii on the bytes [ptr, ptr + len), in place: each byte's action is
 * table[byte & 0x7f] (0 keep, 1 lowercase, 2 drop, 3 word break); runs of breaks become one space
 * between kept bytes, none at either end. Returns the new length.
 */
export function foldAscii(ptr: usize, len: i32, table: usize): i32 {
  foldN = 0;
  foldPending = 0;
  let i = 0;
  // Most 16-byte blocks of prose are letters, digits and single spaces: for those (when the table treats
  // them as the normalizers do) the output is the block lowercased, give or take a space at its ends.
  if (plainTable(table)) {
    const a = i8x16.splat(0x61), upperA = i8x16.splat(0x41), zero = i8x16.splat(0x30), space = i8x16.splat(32);
    for (; i + 16 <= len; i += 16) {
      const v = v128.load(ptr + <usize>i);
      const upper = i8x16.lt_u(i8x16.sub(v, upperA), i8x16.splat(26));
      const isSpace = i8x16.eq(v, space);
      const plain = v128.or(
        v128.or(i8x16.lt_u(i8x16.sub(v, a), i8x16.splat(26)), upper),
        v128.or(i8x16.lt_u(i8x16.sub(v, zero), i8x16.splat(10)), isSpace),
      );
      const spaces = <u32>i8x16.bitmask(isSpace);
      if (!i8x16.all_true(plain) || (spaces & (spaces >> 1)) != 0) {
        foldBytes(ptr, i, i + 16, table);
        continue;
      }
      foldPlainBlock(ptr, v128.add<i8>(v, v128.and(upper, space)), spaces);
    }
  }
  foldBytes(ptr, i, len, table);
  return foldN;
}

/**
 * Puts an ASCII stand-in byte in place of each non-ASCII character of the UTF-8 text [ptr, ptr + len)
 * that `map` knows (192 bytes: U+0080-U+00BF, then U+2000-U+207F; 0 for a character it does not know),
 * in place (the text only ever moves left). Returns the new length, or -1 (the text then holds garbage)
 * at the first character the map does not know. The normalizer's table (src/text/normalize.ts
 * punctuationStandIns) maps typographic punctuation to a byte that its fold drops or breaks at, as its
 * Unicode path would: so a text whose only non-ASCII characters are quotes, dashes and the like is folded
 * in one pass, as an ASCII text is.
 */
export function mapPunctuation(ptr: usize, len: i32, map: usize): i32 {
  let i = 0, o = 0;
  while (i < len) {
    if (i + 16 <= len) {
      const v = v128.load(ptr + <usize>i);
      if (i8x16.bitmask(v) == 0) {
        if (o != i) v128.store(ptr + <usize>o, v);
        i += 16;
        o += 16;
        continue;
      }
    }
    const c = <u32>load<u8>(ptr + <usize>i);
    if (c < 0x80) {
      store<u8>(ptr + <usize>(o++), <u8>c);
      i++;
      continue;
    }
    let index: i32;
    if (c == 0xc2 && i + 1 < len) {
      const b1 = <u32>load<u8>(ptr + <usize>(i + 1));
      if (b1 < 0x80 || b1 > 0xbf) return -1;
      index = <i32>(b1 - 0x80);
      i += 2;
    } else if (c == 0xe2 && i + 2 < len) {
      const b1 = <u32>load<u8>(ptr + <usize>(i + 1)), b2 = <u32>load<u8>(ptr + <usize>(i + 2));
      if ((b1 != 0x80 && b1 != 0x81) || b2 < 0x80 || b2 > 0xbf) return -1;
      index = 64 + <i32>((b1 - 0x80) << 6) + <i32>(b2 - 0x80);
      i += 3;
    } else {
      return -1;
    }
    const standIn = load<u8>(map + <usize>index);
    if (standIn == 0) return -1;
    store<u8>(ptr + <usize>(o++), standIn);
  }
  return o;
}

// The fold's state between blocks: bytes written, and whether a word break is owed before the next byte kept.
let foldN: i32 = 0;
let foldPending: i32 = 0;

// Whether the table keeps a-z and 0-9, lowercases A-Z and breaks at a space: the cases foldPlainBlock knows.
function plainTable(table: usize): bool {
  if (load<u8>(table + 32) != 3) return false;
  for (let c = 0x30; c <= 0x39; c++) if (load<u8>(table + <usize>c) != 0) return false;
  for (let c = 0x41; c <= 0x5a; c++) if (load<u8>(table + <usize>c) != 1 || load<u8>(table + <usize>(c + 32)) != 0) return false;
  return true;
}

/**
 * Writes a block of letters, digits and single spaces (`spaces`: which bytes are spaces), lowercased in
 * `lowered`. A space first in the block is the word break owed before its second byte (none at the start
 * of the text); otherwise an owed break is written before the block. A space last is owed, not written.
 */
function foldPlainBlock(ptr: usize, lowered: v128, spaces: u32): void {
  let n = foldN;
  if ((spaces & 1) != 0) {
    if (n == 0) {
      v128.store(ptr, i8x16.shuffle(lowered, lowered, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0));
      n = 15;
    } else {
      v128.store(ptr + <usize>n, lowered);
      n += 16;
    }
  } else {
    if (foldPending != 0 && n > 0) store<u8>(ptr + <usize>(n++), 32); // n is below the block: a break was read and not written
    v128.store(ptr + <usize>n, lowered);
    n += 16;
  }
  foldPending = 0;
  if ((spaces & 0x8000) != 0) {
    n--;
    foldPending = 1;
  }
  foldN = n;
}

// The bytes [from, to) one at a time, branch-free: words and breaks alternate every few bytes, which
// branches would mispredict. The stores land at or before the byte being read (a space is only owed
// after a break byte that wrote nothing), so in place is safe; a store that does not count is
// overwritten later or cut off.
function foldBytes(ptr: usize, from: i32, to: i32, table: usize): void {
  let n = foldN;
  let pending = foldPending;
  for (let i = from; i < to; i++) {
    const c = <i32>load<u8>(ptr + <usize>i);
    const action = <i32>load<u8>(table + <usize>(c & 0x7f));
    const keep = <i32>(action <= 1);
    store<u8>(ptr + <usize>n, 32);
    n += keep & pending & <i32>(n > 0);
    store<u8>(ptr + <usize>n, c + (action == 1 ? 32 : 0));
    n += keep;
    pending = (pending | <i32>(action == 3)) & (keep ^ 1);
  }
  foldN = n;
  foldPending = pending;
}
