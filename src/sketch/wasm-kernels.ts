// The WebAssembly SIMD kernels (assembly/kernels.ts, built into dist/sketch/kernels.wasm by
// `npm run build`) behind a small typed interface. They compute exactly what the JavaScript functions of
// this folder compute (test/unit/wasm-kernels.test.ts holds them to it); the signer uses them when they
// load, and the JavaScript otherwise. NEAR_DUP_WASM=0 turns them off.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Permutations } from './minhash.js';
import type { Hash64 } from './simhash.js';
import type { CoreMarks } from './core-similarity.js';
import type { TemplateFilter } from './template-tokens.js';
import { type TokenHashName, tokenHashEntry } from './token-hash.js';

// The few WebAssembly JS API types used here (the project's lib settings declare none).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
type WasmModule = object;
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { exports: object };
}
const WA = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

interface KernelExports {
  memory: WasmMemory;
  init(): number;
  ensure(end: number): number;
  simhashShingles(src: number, starts: number, ends: number, count: number, window: number, out: number): number;
  md5Ranges(src: number, starts: number, ends: number, count: number, out: number): void;
  sha1Ranges(src: number, starts: number, ends: number, count: number, out: number): void;
  tokenHashesSha1(src: number, starts: number, ends: number, count: number, out: number): void;
  tokenHashesMmh3(src: number, starts: number, ends: number, count: number, out: number): void;
  tokenHashesCrc32(src: number, starts: number, ends: number, count: number, out: number): void;
  distinctInPlace(values: number, count: number, table: number, slots: number, key: number): number;
  minhashAffine32(values: number, a: number, b: number, perms: number, hashes: number, count: number): void;
  layoutAsciiWords(ptr: number, len: number, starts: number, ends: number): number;
  foldAscii(ptr: number, len: number, table: number): number;
  mapPunctuation(ptr: number, len: number, map: number): number;
}

/** Words laid out in the arena: bytes at src, word i is [starts[i], ends[i]) (arena pointers). */
export interface ArenaWords {
  src: number;
  starts: number;
  ends: number;
  count: number;
}

const KERNEL_EXPORTS: readonly (keyof KernelExports)[] = [
  'init', 'ensure', 'simhashShingles', 'md5Ranges', 'sha1Ranges', 'tokenHashesSha1', 'tokenHashesMmh3', 'tokenHashesCrc32',
  'distinctInPlace', 'minhashAffine32', 'layoutAsciiWords', 'foldAscii', 'mapPunctuation',
];

const encoder = new TextEncoder();
/** Mixed into each hash's place in the table of distinct hashes: a process's own, unknown to any document. */
const DISTINCT_KEY = randomBytes(4).readUInt32LE(0);
// A 32-bit memory's limit (65,536 pages of 64 KiB), less one page so that addresses fit an i32 argument.
const MAX_MEMORY = 2 ** 32 - 65536;

// The build beside this module; when this module runs from the TypeScript sources (the tests), the
// build in dist/ (npm test builds first).
function wasmFile(): string | undefined {
  for (const candidate of ['./kernels.wasm', '../../dist/sketch/kernels.wasm']) {
    const file = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** Padded affine32 coefficients, once per permutation set. */
interface PaddedPerms {
  a: Uint32Array;
  b: Uint32Array;
  padded: number;
}

/**
 * One instance of the kernels with its own memory. Pointers handed out by `alloc` and the copy methods
 * stay valid until the next `reset`; typed-array views of the memory are refreshed when it grows.
 */
export class WasmKernels {
  private readonly x: KernelExports;
  private readonly base: number;
  private top: number;
  private limit: number;
  private u8!: Uint8Array;
  private i32!: Int32Array;
  private u32!: Uint32Array;
  private readonly padded = new WeakMap<Permutations, PaddedPerms>();

  constructor(module: WasmModule) {
    this.x = new WA!.Instance(module, {}).exports as unknown as KernelExports;
    this.base = this.x.init();
    this.top = this.base;
    this.limit = this.x.memory.buffer.byteLength;
    this.refreshViews();
  }

  private refreshViews(): void {
    const buffer = this.x.memory.buffer;
    this.u8 = new Uint8Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.u32 = new Uint32Array(buffer);
    this.limit = buffer.byteLength;
  }

  /** Frees everything allocated since the last reset. */
  reset(): void {
    this.top = this.base;
  }

  /** `bytes` bytes of arena, 16-byte aligned. */
  alloc(bytes: number): number {
    const ptr = Math.ceil(this.top / 16) * 16; // (not bit operations: addresses may pass 2^31)
    const end = ptr + bytes + 64; // slack: kernels may read up to 64 bytes from the start of a range
    if (end > this.limit) {
      // Double, so that a growing document size does not grow the memory page by page.
      if (end > MAX_MEMORY || (!this.x.ensure(Math.min(Math.max(end, this.limit * 2), MAX_MEMORY)) && !this.x.ensure(end))) {
        throw new RangeError(`the WebAssembly kernels cannot grow their memory to ${end} bytes`);
      }
      this.refreshViews();
    }
    this.top = ptr + bytes;
    return ptr;
  }

  copyBytes(bytes: Uint8Array, length: number): number {
    const ptr = this.alloc(length);
    this.u8.set(bytes.subarray(0, length), ptr);
    return ptr;
  }

  copyInt32(values: Int32Array, count: number): number {
    const ptr = this.alloc(count * 4);
    this.i32.set(values.subarray(0, count), ptr >>> 2);
    return ptr;
  }

  copyUint32(values: ArrayLike<number>, count: number): number {
    const ptr = this.alloc(count * 4);
    const at = ptr >>> 2;
    if (values instanceof Uint32Array) this.u32.set(values.subarray(0, count), at);
    else for (let i = 0; i < count; i++) this.u32[at + i] = values[i];
    return ptr;
  }

  /**
   * layoutWords (src/text/token-ranges.ts) in the arena, for a text that is all ASCII; undefined for
   * any other text (and then the arena holds garbage up to the next reset).
   */
  layoutAsciiWords(text: string): ArenaWords | undefined {
    const len = text.length;
    const src = this.alloc(len);
    const { read, written } = encoder.encodeInto(text, this.u8.subarray(src, src + len));
    if (read !== len || written !== len) return undefined;
    return this.layoutArenaWords(src, len);
  }

  /** layoutWords of the ASCII bytes [src, src + len) of the arena, in place. */
  layoutArenaWords(src: number, len: number): ArenaWords {
    const maxWords = (len + 1) >> 1;
    const starts = this.alloc(maxWords * 4), ends = this.alloc(maxWords * 4);
    return { src, starts, ends, count: this.x.layoutAsciiWords(src, len, starts, ends) };
  }

  /**
   * foldAscii (asciiOnly) of `text` into the arena: the folded bytes' pointer and length, undefined for a
   * text that is not all ASCII, less the punctuation the table knows (and then the arena holds garbage up
   * to the next reset).
   */
  foldAsciiInArena(text: string, table: Uint8Array): { src: number; length: number } | undefined {
    const ascii = this.asciiInArena(text, table);
    return ascii && { src: ascii.src, length: this.x.foldAscii(ascii.src, ascii.length, ascii.table) };
  }

  /**
   * The table (see foldAscii) and `text` as bytes in the arena: its UTF-8 when that is all ASCII; else,
   * when the table goes on past its 128 actions with stand-ins for non-ASCII punctuation (the kernels'
   * mapPunctuation), the UTF-8 with those in place of the characters; undefined for any other text.
   */
  private asciiInArena(text: string, table: Uint8Array): { src: number; length: number; table: number } | undefined {
    const len = text.length;
    const tablePtr = this.copyBytes(table, table.length);
    const room = table.length > 128 ? 3 * len : len; // UTF-8 takes at most 3 bytes a UTF-16 unit
    const src = this.alloc(room);
    const { read, written } = encoder.encodeInto(text, this.u8.subarray(src, src + room));
    if (read !== len) return undefined;
    if (written === len) return { src, length: len, table: tablePtr };
    if (table.length <= 128) return undefined;
    const length = this.x.mapPunctuation(src, written, tablePtr + 128);
    return length < 0 ? undefined : { src, length, table: tablePtr };
  }

  /** A view of `length` bytes at ptr, valid until the next reset or growth of the memory. */
  viewBytes(ptr: number, length: number): Uint8Array {
    return this.u8.subarray(ptr, ptr + length);
  }

  /**
   * Applies a 128-entry byte action table (0 keep, 1 lowercase, 2 drop, 3 word break) to the text, as
   * src/text/normalize.ts foldAscii does. With `asciiOnly`, a text that is not all ASCII gives
   * undefined (unless the table goes on with punctuation stand-ins, see asciiInArena, and they cover
   * every non-ASCII character); without, the text is taken as Latin-1 (its chars' low bytes), as
   * foldAscii takes it.
   */
  foldAscii(text: string, table: Uint8Array, asciiOnly: boolean): string | undefined {
    this.reset();
    let src: number, len: number, tablePtr: number;
    if (asciiOnly) {
      const ascii = this.asciiInArena(text, table);
      if (!ascii) return undefined;
      ({ src, length: len, table: tablePtr } = ascii);
    } else {
      len = text.length;
      tablePtr = this.copyBytes(table, 128);
      src = this.alloc(len);
      Buffer.from(this.u8.buffer, src, len).write(text, 0, 'latin1');
    }
    const n = this.x.foldAscii(src, len, tablePtr);
    return Buffer.from(this.u8.buffer, src, n).toString('latin1');
  }

  /** Reads `count` int32 values at ptr. */
  readInt32(ptr: number, count: number): Int32Array {
    return this.i32.slice(ptr >>> 2, (ptr >>> 2) + count);
  }

  /** Reads `length` bytes at ptr. */
  readBytes(ptr: number, length: number): Uint8Array {
    return this.u8.slice(ptr, ptr + length);
  }

  /**
   * SimHash of the word shingles of `window` words (one feature of all words if there are fewer),
   * words being the ranges [starts[i], ends[i]) (pointers from the copy methods) of the bytes at src.
   */
  simhashShingles(src: number, starts: number, ends: number, count: number, window: number): Hash64 {
    const out = this.alloc(8);
    this.x.simhashShingles(src, starts, ends, count, window, out);
    return { hi: this.u32[out >>> 2], lo: this.u32[(out >>> 2) + 1] };
  }

  /** md5First64 of each range, as (hi, lo) pairs. */
  md5Ranges(src: number, starts: number, ends: number, count: number): Uint32Array {
    const out = this.alloc(count * 8);
    this.x.md5Ranges(src, starts, ends, count, out);
    return this.u32.slice(out >>> 2, (out >>> 2) + 2 * count);
  }

  /**
   * lsh.ts bandDigests: md5First64 of each band of `r` values, the values copied into the arena (which is
   * not reset: what the caller holds there stays).
   */
  bandDigests(values: Uint32Array, b: number, r: number): Uint32Array {
    const src = this.copyUint32(values, b * r);
    const starts = this.alloc(b * 4), ends = this.alloc(b * 4);
    const at = starts >>> 2, to = ends >>> 2;
    for (let band = 0; band < b; band++) {
      this.i32[at + band] = 4 * r * band;
      this.i32[to + band] = 4 * r * (band + 1);
    }
    return this.md5Ranges(src, starts, ends, b);
  }

  /** sha1FirstWord of each range. */
  sha1Ranges(src: number, starts: number, ends: number, count: number): Uint32Array {
    const out = this.alloc(count * 4);
    this.x.sha1Ranges(src, starts, ends, count, out);
    return this.u32.slice(out >>> 2, (out >>> 2) + count);
  }

  /**
   * The token hash of each range, by its hash's kernel (its entry in sketch/token-hash.ts: sha1 is datasketch's
   * sha1_hash32, mmh3 and crc32 as Python's), into a new arena array (returned as its pointer).
   */
  tokenHashes(hash: TokenHashName, src: number, starts: number, ends: number, count: number): number {
    const { kernel } = tokenHashEntry(hash);
    if (!kernel) throw new RangeError(`the token hash "${hash}" has no WebAssembly kernel`);
    const out = this.alloc(count * 4);
    this.x[kernel](src, starts, ends, count, out);
    return out;
  }

  /** Reads `count` uint32 values at ptr. */
  readUint32(ptr: number, count: number): Uint32Array {
    return this.u32.slice(ptr >>> 2, (ptr >>> 2) + count);
  }

  private paddedPerms(perms: Permutations): PaddedPerms {
    let p = this.padded.get(perms);
    if (!p) {
      const padded = (perms.numPerm + 15) & ~15;
      const a = new Uint32Array(padded), b = new Uint32Array(padded);
      a.set(perms.a32);
      b.set(perms.b32);
      p = { a, b, padded };
      this.padded.set(perms, p);
    }
    return p;
  }

  /**
   * updateMinhash (affine32 scheme only) with the `count` uint32 hashes at the arena pointer `hashes`,
   * which it overwrites. Repeats are dropped first, as they cannot change a minimum; `onDistinct` is shown
   * the distinct hashes before they are overwritten, and `filter` then narrows them (template-tokens.ts), or,
   * with `marks`, puts the core's first: the MinHash of every token is made in two parts and merged with its
   * marks (core-similarity.ts).
   */
  minhashAffine32(values: Uint32Array, perms: Permutations, hashes: number, count: number, onDistinct?: (hashes: Uint32Array, count: number) => void, filter?: TemplateFilter, marks?: CoreMarks): void {
    if (perms.scheme !== 'affine32') throw new Error('the wasm MinHash kernel does the affine32 scheme only');
    let slots = 16;
    while (slots < count * 2) slots *= 2;
    const table = this.alloc(slots * 5);
    const distinct = this.x.distinctInPlace(hashes, count, table, slots, DISTINCT_KEY);
    onDistinct?.(this.u32.subarray(hashes >>> 2, (hashes >>> 2) + distinct), distinct);
    const view = this.u32.subarray(hashes >>> 2, (hashes >>> 2) + distinct);
    const kept = filter ? (marks ? filter.partition(view, distinct) : filter.narrow(view, distinct)) : distinct;
    const { a, b, padded } = this.paddedPerms(perms);
    const ap = this.copyUint32(a, padded), bp = this.copyUint32(b, padded);
    this.foldInArena(values, ap, bp, padded, hashes, kept);
    if (filter && marks) {
      this.foldInArena(marks.fresh(), ap, bp, padded, hashes + kept * 4, distinct - kept);
      marks.merge(values, kept);
    }
  }

  /** The affine32 MinHash `values` folded with `count` hashes at the arena pointer `hashes`. */
  private foldInArena(values: Uint32Array, ap: number, bp: number, padded: number, hashes: number, count: number): void {
    const vp = this.alloc(padded * 4);
    this.u32.set(values, vp >>> 2);
    this.x.minhashAffine32(vp, ap, bp, padded, hashes, count);
    values.set(this.u32.subarray(vp >>> 2, (vp >>> 2) + values.length));
  }
}

// Read once, when this module loads.
const disabled = process.env.NEAR_DUP_WASM === '0';
let loaded: WasmModule | null | undefined;

/** The compiled kernels, or undefined when they are turned off, missing or cannot run here. */
export function kernelModule(): WasmModule | undefined {
  if (loaded === undefined) {
    loaded = null;
    const file = disabled || !WA ? undefined : wasmFile();
    if (file) {
      try {
        const module = new WA!.Module(readFileSync(file));
        // SIMD support is checked when the module compiles; this checks that it runs and is this build's.
        const exports = new WA!.Instance(module, {}).exports as Record<string, unknown>;
        if (KERNEL_EXPORTS.every((name) => typeof exports[name] === 'function')) loaded = module;
      } catch {
        loaded = null;
      }
    }
  }
  return loaded ?? undefined;
}

/** A new kernel instance (each signer has its own memory), or undefined if the kernels are unavailable. */
export function createWasmKernels(): WasmKernels | undefined {
  const module = kernelModule();
  return module ? new WasmKernels(module) : undefined;
}
