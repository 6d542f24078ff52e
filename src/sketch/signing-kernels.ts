// The hot loops of signing behind one interface: token hashes folded into a MinHash, and the SimHash of
// word 4-shingles. Two implementations give the same bits: the JavaScript one (the reference, and the
// fallback) and the WebAssembly SIMD one (assembly/kernels.ts), used when it loads.
import { shingleRanges, TokenRanges } from '../text/token-ranges.js';
import { tokenizerEntry } from '../text/tokenize.js';
import { md5First64 } from './digests.js';
import { DistinctUint32 } from './distinct.js';
import { bandDigests, type LshParams } from './lsh.js';
import { type MinhashScheme, type Permutations, updateMinhash } from './minhash.js';
import { type Hash64, SimhashAccumulator } from './simhash.js';
import type { CoreMarks } from './core-similarity.js';
import { TemplateFilter, type TemplateTokens } from './template-tokens.js';
import { CachedByteHash, type TokenHashName, tokenHashEntry } from './token-hash.js';
import { type ArenaWords, createWasmKernels, type WasmKernels } from './wasm-kernels.js';

/** SimHash features are word shingles of this many words. */
export const SIMHASH_WINDOW = 4;

/** Receives a document's distinct token hashes: a view, valid only during the call. */
export type DistinctSink = (hashes: Uint32Array, count: number) => void;

/** The hot loops of signing, one implementation or the other (the file header says which). */
export interface SigningKernels {
  /** Which implementation this is. */
  readonly name: 'wasm' | 'js';
  /**
   * The whole signature of white-space tokens of an all-ASCII text in one go (the default condenser's
   * common case): folds the token hashes into `minhash`; undefined when it does not apply.
   */
  signAsciiWords(clean: string, minhash: Uint32Array, onDistinct?: DistinctSink): { tokens: number; fingerprint: Hash64 } | undefined;
  /**
   * signAsciiWords of the ASCII fold of `text` by `table` (the normalizer's last pass, see
   * text/normalize.ts splitNormalizer; punctuation stand-ins after its 128 actions, if any, are put in
   * place of non-ASCII punctuation first), made where the folded bytes already are; `clean` is a view of
   * those bytes, valid until the next call. Undefined when it does not apply (then nothing is folded in).
   */
  signFoldedAscii(text: string, table: Uint8Array, minhash: Uint32Array, onDistinct?: DistinctSink): { tokens: number; fingerprint: Hash64; clean: Uint8Array } | undefined;
  /**
   * Folds the hashes of `tokens` into `minhash`, and gives the SimHash of the word shingles of `words`.
   * `onDistinct` is shown the distinct token hashes on the way.
   */
  sign(words: TokenRanges, tokens: TokenRanges, minhash: Uint32Array, onDistinct?: DistinctSink): Hash64;
  /** lsh.ts bandDigests. */
  bandDigests(values: Uint32Array, lsh: LshParams): Uint32Array;
  /** The fold of the normalizer's ASCII pass, when this implementation has a faster one. */
  readonly foldAscii?: (text: string, table: Uint8Array, asciiOnly: boolean) => string | undefined;
}

/** What the kernels are set up for: the token hash, the tokenizer, the MinHash scheme and its permutations. */
export interface KernelSpec {
  hash: TokenHashName;
  tokenizer: string;
  scheme: MinhashScheme;
  perms: Permutations;
  /** Token hashes left out of the MinHash (and only of it): template-tokens.ts. */
  template?: TemplateTokens;
  /**
   * With `template`, the `;core=` way instead (core-similarity.ts): the MinHash is of every token, and these
   * marks get which values the template tokens gave and the core's size, for each document signed.
   */
  marks?: CoreMarks;
}

/** The WebAssembly kernels when they load (NEAR_DUP_WASM=0 turns them off), else the JavaScript ones. */
export function createSigningKernels(spec: KernelSpec): SigningKernels {
  const wasm = createWasmKernels();
  return wasm ? new WasmSigning(wasm, spec) : new JsSigning(spec);
}

/** The reference: plain JavaScript over the token byte ranges. */
export class JsSigning implements SigningKernels {
  readonly name: 'wasm' | 'js' = 'js';
  private readonly hash;
  private readonly cache;
  private readonly distinct = new DistinctUint32();
  private readonly features = new TokenRanges();
  private readonly md5Out = new Uint32Array(2);
  /** Narrows a document's distinct token hashes to those its MinHash is made of; none without a template. */
  protected readonly filter: TemplateFilter | undefined;

  constructor(protected readonly spec: KernelSpec) {
    const { hash, memo } = tokenHashEntry(spec.hash);
    this.hash = hash;
    this.cache = memo ? new CachedByteHash(hash) : undefined;
    this.filter = spec.template && new TemplateFilter(spec.template);
  }

  signAsciiWords(_clean: string, _minhash: Uint32Array, _onDistinct?: DistinctSink): { tokens: number; fingerprint: Hash64 } | undefined {
    return undefined;
  }

  signFoldedAscii(_text: string, _table: Uint8Array, _minhash: Uint32Array, _onDistinct?: DistinctSink): { tokens: number; fingerprint: Hash64; clean: Uint8Array } | undefined {
    return undefined;
  }

  bandDigests(values: Uint32Array, lsh: LshParams): Uint32Array {
    return bandDigests(values, lsh);
  }

  sign(words: TokenRanges, tokens: TokenRanges, minhash: Uint32Array, onDistinct?: DistinctSink): Hash64 {
    this.foldTokens(tokens, minhash, onDistinct);
    return this.simhash(words);
  }

  /** Repeated tokens cannot lower a minimum: each distinct token hash is folded in once. */
  protected foldTokens(tokens: TokenRanges, minhash: Uint32Array, onDistinct?: DistinctSink): void {
    const { distinct, cache, hash } = this;
    distinct.clear(tokens.count);
    const { source: bytes, starts, ends } = tokens;
    for (let i = 0; i < tokens.count; i++) distinct.add(cache ? cache.get(bytes, starts[i], ends[i]) : hash(bytes, starts[i], ends[i]));
    onDistinct?.(distinct.values, distinct.size);
    const { filter } = this;
    const marks = this.spec.marks;
    if (filter && marks) {
      // The core's tokens first, folded into the MinHash; the template's apart, then merged with their marks.
      const kept = filter.partition(distinct.values, distinct.size);
      this.foldHashes(minhash, distinct.values, kept);
      this.foldHashes(marks.fresh(), distinct.values.subarray(kept), distinct.size - kept);
      marks.merge(minhash, kept);
      return;
    }
    // The containment sample has seen every distinct token; the MinHash leaves the template ones out.
    const count = filter ? filter.narrow(distinct.values, distinct.size) : distinct.size;
    this.foldHashes(minhash, distinct.values, count);
  }

  protected foldHashes(minhash: Uint32Array, hashes: Uint32Array, count: number): void {
    updateMinhash(minhash, this.spec.perms, hashes, count);
  }

  /** SimHash over word 4-shingles, every occurrence counted, as simhash-py's compute(shingles). */
  private simhash(words: TokenRanges): Hash64 {
    const acc = new SimhashAccumulator();
    const features = this.features;
    shingleRanges(words, SIMHASH_WINDOW, features);
    for (let i = 0; i < features.count; i++) {
      md5First64(features.source, features.starts[i], features.ends[i], this.md5Out);
      acc.add(this.md5Out[0], this.md5Out[1]);
    }
    return acc.result();
  }
}

/** The WebAssembly SIMD kernels: token bytes copied into the module's memory once per document. */
export class WasmSigning extends JsSigning {
  override readonly name = 'wasm' as const;
  readonly foldAscii;
  /** Whether the MinHash is made in WebAssembly too: affine32, and a token hash with a kernel. */
  private readonly wasmMinhash: boolean;
  /** Whether the tokens are the words (tokenizer registry): then whole texts are signed in the module's memory. */
  private readonly wordTokens: boolean;

  constructor(
    private readonly wasm: WasmKernels,
    spec: KernelSpec,
  ) {
    super(spec);
    this.wasmMinhash = spec.scheme === 'affine32' && tokenHashEntry(spec.hash).kernel !== undefined;
    this.wordTokens = tokenizerEntry(spec.tokenizer).words === true;
    this.foldAscii = (text: string, table: Uint8Array, asciiOnly: boolean) => wasm.foldAscii(text, table, asciiOnly);
  }

  override signAsciiWords(clean: string, minhash: Uint32Array, onDistinct?: DistinctSink): { tokens: number; fingerprint: Hash64 } | undefined {
    if (!this.wasmMinhash || !this.wordTokens) return undefined;
    this.wasm.reset();
    const laid = this.wasm.layoutAsciiWords(clean);
    return laid && this.signArenaWords(laid, minhash, onDistinct);
  }

  override signFoldedAscii(text: string, table: Uint8Array, minhash: Uint32Array, onDistinct?: DistinctSink): { tokens: number; fingerprint: Hash64; clean: Uint8Array } | undefined {
    if (!this.wasmMinhash || !this.wordTokens) return undefined;
    const { wasm } = this;
    wasm.reset();
    const folded = wasm.foldAsciiInArena(text, table);
    if (!folded) return undefined;
    // The words are laid out in place; folded text is laid out already (single spaces), so its bytes stay.
    const signed = this.signArenaWords(wasm.layoutArenaWords(folded.src, folded.length), minhash, onDistinct);
    return { ...signed, clean: wasm.viewBytes(folded.src, folded.length) };
  }

  override bandDigests(values: Uint32Array, lsh: LshParams): Uint32Array {
    return this.wasm.bandDigests(values, lsh.b, lsh.r);
  }

  private signArenaWords(laid: ArenaWords, minhash: Uint32Array, onDistinct?: DistinctSink): { tokens: number; fingerprint: Hash64 } {
    const { wasm } = this;
    const hashes = wasm.tokenHashes(this.spec.hash, laid.src, laid.starts, laid.ends, laid.count);
    wasm.minhashAffine32(minhash, this.spec.perms, hashes, laid.count, onDistinct, this.filter, this.spec.marks);
    return { tokens: laid.count, fingerprint: wasm.simhashShingles(laid.src, laid.starts, laid.ends, laid.count, SIMHASH_WINDOW) };
  }

  override sign(words: TokenRanges, tokens: TokenRanges, minhash: Uint32Array, onDistinct?: DistinctSink): Hash64 {
    const { wasm } = this;
    wasm.reset();
    const src = wasm.copyBytes(words.bytes, words.length);
    const wordStarts = wasm.copyInt32(words.starts, words.count);
    const wordEnds = wasm.copyInt32(words.ends, words.count);
    if (this.wasmMinhash) {
      let tokenSrc = src, tokenStarts = wordStarts, tokenEnds = wordEnds;
      if (tokens !== words) {
        if (tokens.source !== words.bytes) tokenSrc = wasm.copyBytes(tokens.bytes, tokens.length);
        tokenStarts = wasm.copyInt32(tokens.starts, tokens.count);
        tokenEnds = wasm.copyInt32(tokens.ends, tokens.count);
      }
      const hashes = wasm.tokenHashes(this.spec.hash, tokenSrc, tokenStarts, tokenEnds, tokens.count);
      wasm.minhashAffine32(minhash, this.spec.perms, hashes, tokens.count, onDistinct, this.filter, this.spec.marks);
    } else {
      this.foldTokens(tokens, minhash, onDistinct);
    }
    return wasm.simhashShingles(src, wordStarts, wordEnds, words.count, SIMHASH_WINDOW);
  }

  protected override foldHashes(minhash: Uint32Array, hashes: Uint32Array, count: number): void {
    if (this.wasmMinhash) this.wasm.minhashAffine32(minhash, this.spec.perms, this.wasm.copyUint32(hashes, count), count);
    else super.foldHashes(minhash, hashes, count);
  }
}
