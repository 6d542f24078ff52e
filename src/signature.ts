// The condenser: a spec string "tokenizer:normalizer:hash:permutations" becomes one function from text
// to the signature written into the index (MinHash, LSH band keys, SimHash and its block keys).
import { hash } from 'node:crypto';
import { UsageError } from './errors.js';
import { OWN_SIMHASH, PresetError, preset as presetNamed, presetCondenser, type SimhashScheme } from './presets.js';
import { DEFAULT_CONTAINMENT_SAMPLE, SampleRanks } from './sketch/containment.js';
import { CoreMarks, coreExtension, encodeCore } from './sketch/core-similarity.js';
import { bandKeysOfDigests, checkBandsRows, DEFAULT_FALSE_NEGATIVE_WEIGHT, DEFAULT_KEY_ENCODING, DEFAULT_THRESHOLD, type KeyEncoding, type LshParams, optimalBandsRows } from './sketch/lsh.js';
import { emptyMinhash, MAX_HASH, MINHASH_SCHEMES, type MinhashScheme, minhashPermutations } from './sketch/minhash.js';
import { createSigningKernels, SIMHASH_WINDOW } from './sketch/signing-kernels.js';
import { formatParams, paramsOptions, parseParams, sampleEvery } from './stored/params.js';
import { DEFAULT_SIMHASH_BLOCKS, type Hash64, simhashBlockKeys, simhashHex } from './sketch/simhash.js';
import { simhashBase32, simhashDocOf } from './sketch/simhash-doc.js';
import { type TemplateTokens, templateDigest } from './sketch/template-tokens.js';
import { DEFAULT_TOKEN_HASH, TOKEN_HASH_REGISTRY, type TokenHashName } from './sketch/token-hash.js';
import { DEFAULT_NORMALIZER, NORMALIZER_REGISTRY, type NormalizerName, normalizer, normalizerEntry, type SplitNormalizer, splitNormalizer } from './text/normalize.js';
import { layoutWords, TokenRanges } from './text/token-ranges.js';
import type { Named, Registry } from './text/registry.js';
import { DEFAULT_TOKENIZER, TOKENIZERS, tokenizerEntry, tokenLayout } from './text/tokenize.js';

/**
 * The condenser a signer uses when none is given: word 4-grams of the text with its markup removed, SHA-1 token
 * hashes, 128 permutations.
 */
export const DEFAULT_CONDENSER = 'white-space-4-grams:norm-html:sha1:128';
/** The permutations' seed unless given: datasketch's default, so that both sign alike. */
export const DEFAULT_SEED = 1;
/** How the MinHash permutes unless given: datasketch's default since 2.0 (sketch/minhash.ts). */
export const DEFAULT_SCHEME: MinhashScheme = 'affine32';
/** SimHash features are word shingles of this many words (simhash-py's default window). */
export { SIMHASH_WINDOW };

/** A condenser spec taken apart: tokenizer, normalizer, token hash, number of permutations. */
export interface CondenserSpec {
  tokenizer: string;
  normalizer: NormalizerName;
  hash: TokenHashName;
  numPerm: number;
}

/** A wrong spec or signer option, with a message that lists what is valid (a usage error: exit code 2 on the command line). */
export class CondenserSpecError extends UsageError {
  override name = 'CondenserSpecError';
}

/** Parses "tokenizer:normalizer:hash:permutations"; an empty or missing part takes the default. */
export function parseCondenserSpec(spec: string = DEFAULT_CONDENSER): CondenserSpec {
  const parts = spec.trim().split(':');
  if (parts.length > 4) {
    throw new CondenserSpecError(
      `condenser spec "${spec}" has ${parts.length} parts; the form is tokenizer:normalizer:hash:permutations, e.g. ${DEFAULT_CONDENSER}`,
    );
  }
  const [tok = '', norm = '', hash = '', perms = ''] = parts.map((p) => p.trim());
  const part = <T extends Named>(registry: Registry<T>, given: string, fallback: string, what: string): T => {
    const entry = registry.get(given === '' ? fallback : given);
    if (!entry) throw new CondenserSpecError(`unknown ${what} "${given}" in condenser spec "${spec}"; ${registry.valid()}`);
    return entry;
  };
  const tokenizerName = part(TOKENIZERS, tok, DEFAULT_TOKENIZER, 'tokenizer').name;
  const normalizerName = part(NORMALIZER_REGISTRY, norm, DEFAULT_NORMALIZER, 'normalizer').name;
  const hashName = part(TOKEN_HASH_REGISTRY, hash, DEFAULT_TOKEN_HASH, 'hash').name;
  const numPerm = perms === '' ? 128 : Number(perms);
  if (!/^\d*$/.test(perms) || !Number.isInteger(numPerm) || numPerm < 2 || numPerm > 4096) {
    throw new CondenserSpecError(
      `permutations "${perms}" in condenser spec "${spec}" must be a whole number from 2 to 4096 (128 is usual)`,
    );
  }
  return { tokenizer: tokenizerName, normalizer: normalizerName, hash: hashName, numPerm };
}

/** A spec written back as the string it was parsed from (and as the params keyword names it). */
export function formatCondenserSpec(spec: CondenserSpec): string {
  return `${spec.tokenizer}:${spec.normalizer}:${spec.hash}:${spec.numPerm}`;
}

/**
 * What a signer is made from: a preset or a condenser, the MinHash's seed and scheme, the LSH threshold or bands and
 * rows, the SimHash blocks, the containment sample, the template set.
 */
export interface SignerOptions {
  /** A named preset (presets.ts, e.g. simhash-doc): the condenser parts not given, and how the SimHash is made and written. */
  preset?: string;
  condenser?: string;
  seed?: number;
  scheme?: MinhashScheme;
  threshold?: number;
  falseNegativeWeight?: number;
  /** Explicit LSH bands and rows; both or neither. They override threshold and weights. */
  bands?: number;
  rows?: number;
  simhashBlocks?: number;
  /** Sample 1 distinct token in this many for containment (0: none, 1: all; default 4). */
  containmentSample?: number;
  /** How band keys and sample terms are written (default 2, compact; 1 reads and signs like an index of the first layout). */
  keyEncoding?: KeyEncoding;
  /**
   * Template tokens (sketch/template-tokens.ts); none by default. How the signature treats them is
   * `templateMode`. The containment sample and the SimHash see every token.
   */
  template?: TemplateTokens;
  /**
   * 'core' (the default): the MinHash is of every token, and a `core` field marks the values template tokens
   * gave and holds the core's size (sketch/core-similarity.ts), params `core=<digest>`. 'narrow': template
   * tokens left out of the MinHash, params `tpl=<digest>` (the first way, kept to read and sign for indices
   * signed so).
   */
  templateMode?: TemplateMode;
  /**
   * The digest of the template tokens these options sign with, as a params keyword names them
   * (signerOptionsFromParams): settings can be resolved with it alone, but a signer needs `template`, the
   * set of that digest.
   */
  templateDigest?: string;
}

/**
 * A text's signature: its MinHash, band keys, SimHash and the counts they were made from, before they are written as
 * fields.
 */
export interface Signature {
  condenser: string;
  /** Tokens seen, with repeats; 0 marks an empty signature that never matches anything. */
  tokens: number;
  /** Distinct tokens: the size of the set that Jaccard and containment are about. */
  distinct_tokens: number;
  /** The containment sample: the sampled distinct token hashes as terms, in sampling-rank order. */
  sample: string[];
  minhash: Uint32Array;
  lsh: LshParams;
  bands: string[];
  simhash: string;
  simhash_blocks: string[];
  /** SHA-1 of the normalized text: equal for exact duplicates after normalization. */
  content_hash: string;
  /** With `core=` params: the `core` field (core-similarity.ts encodeCore), the template bits and the core's size. */
  core?: string;
}

/** How template tokens are treated (SignerOptions.templateMode). */
export type TemplateMode = 'core' | 'narrow';

/** Everything that decides whether two stored signatures can be compared, as one keyword. */
export interface SignerSettings {
  spec: CondenserSpec;
  condenser: string;
  seed: number;
  scheme: MinhashScheme;
  lsh: LshParams;
  simhashBlocks: number;
  containmentSample: number;
  keyEncoding: KeyEncoding;
  /** The preset asked for, and the SimHash it makes (w4: near-dup's own, in hex). */
  preset?: string;
  simhash: SimhashScheme;
  /** The digest of the template tokens; absent when none are. */
  template?: string;
  /** How they are treated: with `template` only. */
  templateMode?: TemplateMode;
  params: string;
}

/**
 * The signer's options with every default filled in and checked (condenser spec or preset, seed, scheme,
 * LSH bands and rows from the threshold and weights, SimHash blocks, key encoding, containment sample).
 * @throws {CondenserSpecError} an option that is not valid, naming it and what is.
 */
export function resolveSignerSettings(options: SignerOptions = {}): SignerSettings {
  const { simhash, condenser: asked } = presetChoices(options);
  const spec = parseCondenserSpec(asked);
  const seed = options.seed ?? DEFAULT_SEED;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new CondenserSpecError(`seed must be a whole number from 0 to 4294967295, got ${options.seed}`);
  }
  const scheme = options.scheme ?? DEFAULT_SCHEME;
  if (!MINHASH_SCHEMES.includes(scheme)) {
    throw new CondenserSpecError(`unknown MinHash scheme "${scheme}"; valid schemes: ${MINHASH_SCHEMES.join(', ')}`);
  }
  let lsh: LshParams;
  if (options.bands !== undefined || options.rows !== undefined) {
    if (options.bands === undefined || options.rows === undefined) {
      throw new CondenserSpecError((o) => `give both ${o('bands')} and ${o('rows')}, or neither (then they follow from ${o('threshold')})`);
    }
    lsh = { b: options.bands, r: options.rows };
    checkBandsRows(lsh, spec.numPerm);
  } else {
    lsh = optimalBandsRows({
      threshold: options.threshold ?? DEFAULT_THRESHOLD,
      numPerm: spec.numPerm,
      falseNegativeWeight: options.falseNegativeWeight ?? DEFAULT_FALSE_NEGATIVE_WEIGHT,
    });
  }
  const simhashBlocks = options.simhashBlocks ?? DEFAULT_SIMHASH_BLOCKS;
  simhashBlockKeys('0000000000000000', simhashBlocks); // validates the block count
  const containmentSample = options.containmentSample ?? DEFAULT_CONTAINMENT_SAMPLE;
  if (!Number.isInteger(containmentSample) || containmentSample < 0 || containmentSample > 1024) {
    throw new CondenserSpecError(
      `containment sample must be a whole number from 0 to 1024 (1 distinct token in that many; 0 for none, 1 for exact containment), got ${options.containmentSample}`,
    );
  }
  const keyEncoding = options.keyEncoding ?? DEFAULT_KEY_ENCODING;
  if (keyEncoding !== 1 && keyEncoding !== 2) throw new CondenserSpecError(`key encoding must be 1 or 2, got ${options.keyEncoding}`);
  const condenser = formatCondenserSpec(spec);
  const template = templateDigestOf(options);
  const templateMode = template === undefined ? undefined : templateModeOf(options);
  const marked = template === undefined ? {} : templateMode === 'core' ? { core: template } : { template };
  const params = formatParams({ condenser, numPerm: spec.numPerm, seed, scheme, bands: lsh.b, rows: lsh.r, simhash, blocks: simhashBlocks, keys: keyEncoding, sample: containmentSample, ...marked });
  return { spec, condenser, seed, scheme, lsh, simhashBlocks, containmentSample, keyEncoding, preset: options.preset, simhash, ...(template === undefined ? {} : { template, templateMode }), params };
}

function templateModeOf(options: SignerOptions): TemplateMode {
  const mode = options.templateMode ?? 'core';
  if (mode !== 'core' && mode !== 'narrow') throw new CondenserSpecError(`template mode must be core or narrow, got ${String(options.templateMode)}`);
  return mode;
}

/** The digest of the template tokens the options sign with: the set's, or the one asked for (they must agree). */
function templateDigestOf(options: SignerOptions): string | undefined {
  const { template, templateDigest: asked } = options;
  if (asked !== undefined && !/^[0-9a-f]{12}$/.test(asked)) {
    throw new CondenserSpecError(`template digest "${asked}" must be 12 lowercase hex digits (as a params keyword's core= or tpl= gives it)`);
  }
  if (template === undefined) return asked;
  if (template.digest !== templateDigest(template.hashes)) {
    throw new CondenserSpecError(`the template tokens named ${template.digest} are not that set (their digest is ${templateDigest(template.hashes)}); read them again from where they are stored`);
  }
  if (asked !== undefined && asked !== template.digest) {
    throw new CondenserSpecError(`the signature asks for the template tokens ${asked}, but the set given is ${template.digest}; give the set the index stored under ${asked}`);
  }
  return template.digest;
}

/** The SimHash scheme and the condenser spec that options ask for, a preset's parts filled in. */
function presetChoices(options: SignerOptions): { simhash: SimhashScheme; condenser?: string } {
  if (options.preset === undefined) return { simhash: OWN_SIMHASH, condenser: options.condenser };
  try {
    return { simhash: presetNamed(options.preset).simhash, condenser: presetCondenser(options.preset, options.condenser) };
  } catch (err) {
    throw err instanceof PresetError ? new CondenserSpecError(err.message) : err;
  }
}

export { sampleEvery };

/**
 * The signer options that produce a stored `params` keyword (the inverse of resolveSignerSettings), so
 * that a text can be signed the way an index was; undefined for a value this version cannot sign so.
 */
export function signerOptionsFromParams(params: string): SignerOptions | undefined {
  const parsed = parseParams(params);
  const options = parsed && paramsOptions(parsed);
  if (!options) return undefined;
  try {
    return resolveSignerSettings(options).params === params ? options : undefined;
  } catch {
    return undefined;
  }
}

/** A function from text to its signature, with the settings it was made from. */
export interface Signer {
  (text: string): Signature;
  settings: SignerSettings;
  /** The normalizer step alone. */
  normalize(text: string): string;
  /** The signature of text that is already normalized (skips the normalizer). */
  signNormalized(clean: string): Signature;
  /** The signature as numbers, before its strings are made (valid until the signer's next call). */
  signParts(text: string): SignatureParts;
  /**
   * The distinct token hashes of a text, every one (template tokens too), as the MinHash would see them
   * without a template: what a sample of template tokens is drawn from (sketch/template-tokens.ts).
   */
  tokenHashes(text: string): Uint32Array;
}

const utf8 = new TextDecoder();

/** SHA-1 (hex) of normalized text (or of its UTF-8 bytes): the content_hash of a signature. */
export function contentHash(clean: string | Uint8Array): string {
  return hash('sha1', clean);
}

/**
 * A signature before any of its strings are made: what `sign --jsonl` writes straight into its output as
 * bytes (signing/signature-lines.ts), and what Signer turns into a Signature. Owned by the signer that
 * filled it, and valid until its next call.
 */
export interface SignatureParts {
  tokens: number;
  /** Distinct tokens (0 for an empty signature). */
  distinct: number;
  /** The containment sample as ranks, in order (empty for an empty signature). */
  sample: SampleRanks;
  minhash: Uint32Array;
  /** The band digests of the MinHash, (high, low) per band (lsh.ts bandDigests); empty for an empty signature. */
  bandDigests: Uint32Array;
  fingerprint: Hash64;
  /** Words the SimHash was made of: 0 gives no block keys. */
  words: number;
  content_hash: string;
  /** With `core=` params: the template bits and the core's size (core-similarity.ts coreExtension). */
  core?: Uint32Array;
}

const NO_DIGESTS = new Uint32Array(0);

/**
 * A normalizer for a tokenizer that cuts at what the normalizer drops (sentences at their stops): the text
 * cut first (markup removed, for norm-html), each piece normalized apart, the pieces one a line, where the
 * tokenizer finds them again. Normalized whole, a text had no stops left and was one sentence.
 */
function piecewise(split: SplitNormalizer, cut: (text: string) => string[]): (text: string) => string {
  return (text) =>
    cut(split.first(text))
      .map(split.rest)
      .filter((piece) => piece !== '')
      .join('\n');
}

/**
 * A signer: one function from a text to its signature, its settings resolved once (the library's documented entry is
 * `createSigner` of index.ts).
 */
export function createSigner(options: SignerOptions = {}): Signer {
  const settings = resolveSignerSettings(options);
  const { spec, lsh, simhashBlocks, keyEncoding } = settings;
  if (settings.template !== undefined && options.template === undefined) {
    const key = settings.templateMode === 'core' ? 'core' : 'tpl';
    throw new CondenserSpecError(`these signatures are made with the template tokens ${settings.template} (params ${key}=${settings.template}); sign with that set, which is stored with the index they were written to`);
  }
  // The core way: the kernels mark each document's values (core-similarity.ts).
  const marks = settings.templateMode === 'core' && options.template ? new CoreMarks(spec.numPerm) : undefined;
  // The simhash-doc normalizers give the tokens already, joined by single spaces.
  const docTokens = normalizerEntry(spec.normalizer).simhashDocTokens === true;
  const kernels = createSigningKernels({ hash: spec.hash, tokenizer: spec.tokenizer, scheme: settings.scheme, perms: minhashPermutations(spec.numPerm, settings.seed, settings.scheme), template: options.template, marks });
  const split = splitNormalizer(spec.normalizer, kernels.foldAscii);
  const cutFirst = split && tokenizerEntry(spec.tokenizer).cutFirst;
  const normalize = cutFirst ? piecewise(split, cutFirst) : normalizer(spec.normalizer, kernels.foldAscii);
  const layoutTokens = tokenLayout(spec.tokenizer);
  const words = new TokenRanges();
  const tokenBuf = new TokenRanges();
  // The MinHash of signParts, reused: a Signature gets one of its own.
  const scratchMinhash = emptyMinhash(spec.numPerm);

  const parts: SignatureParts = {
    tokens: 0,
    distinct: 0,
    sample: new SampleRanks(),
    minhash: scratchMinhash,
    bandDigests: NO_DIGESTS,
    fingerprint: { hi: 0, lo: 0 },
    words: 0,
    content_hash: '',
  };
  // The distinct token hashes of the document being signed, seen by the kernels on the way (and kept, when
  // tokenHashes asks for them).
  let keepHashes = false;
  let kept = new Uint32Array(0);
  const onDistinct = (hashes: Uint32Array, count: number) => {
    parts.distinct = count;
    parts.sample.fill(hashes, count, settings.containmentSample);
    if (keepHashes) kept = hashes.slice(0, count);
  };
  const start = (minhash: Uint32Array): Uint32Array => {
    parts.distinct = 0;
    parts.sample.count = 0;
    return minhash;
  };

  const finish = (clean: string | Uint8Array, tokenCount: number, wordCount: number, minhash: Uint32Array, fingerprint: Hash64): SignatureParts => {
    const empty = tokenCount === 0;
    parts.content_hash = contentHash(clean); // first: `clean` may be a view of the kernels' memory
    if (settings.simhash === 'simhash-doc') ({ fingerprint, wordCount } = simhashDocOf(typeof clean === 'string' ? clean : utf8.decode(clean), docTokens));
    parts.tokens = tokenCount;
    parts.minhash = minhash;
    parts.fingerprint = fingerprint;
    parts.words = wordCount;
    if (empty) {
      parts.distinct = 0;
      parts.sample.count = 0;
    }
    parts.bandDigests = empty ? NO_DIGESTS : kernels.bandDigests(minhash, lsh);
    if (marks) parts.core = empty ? coreExtension([], 0) : marks.extension();
    return parts;
  };

  const partsNormalized = (clean: string, minhash: Uint32Array): SignatureParts => {
    start(minhash);
    const whole = kernels.signAsciiWords(clean, minhash, onDistinct);
    if (whole) return finish(clean, whole.tokens, whole.tokens, minhash, whole.fingerprint);
    layoutWords(clean, words);
    const tokens = layoutTokens(clean, words, tokenBuf);
    const fingerprint = kernels.sign(words, tokens, minhash, onDistinct);
    return finish(clean, tokens.count, words.count, minhash, fingerprint);
  };
  // The normalizer's last pass and the signing in one go where the kernels can (ASCII text): the folded
  // bytes are signed where they are, never made into a string.
  const partsFolded = (text: string, minhash: Uint32Array): SignatureParts => {
    const first = split!.first(text);
    start(minhash);
    const whole = kernels.signFoldedAscii(first, split!.asciiTable, minhash, onDistinct);
    if (whole) return finish(whole.clean, whole.tokens, whole.tokens, minhash, whole.fingerprint);
    return partsNormalized(split!.rest(first), minhash);
  };
  const partsOf = split && !cutFirst && kernels.name === 'wasm' ? partsFolded : (text: string, minhash: Uint32Array) => partsNormalized(normalize(text), minhash);

  const toSignature = (p: SignatureParts): Signature => {
    const empty = p.tokens === 0;
    return {
      condenser: settings.condenser,
      tokens: p.tokens,
      distinct_tokens: p.distinct,
      sample: p.sample.terms(keyEncoding),
      minhash: p.minhash,
      lsh,
      bands: bandKeysOfDigests(p.bandDigests, p.bandDigests.length / 2, keyEncoding),
      simhash: settings.simhash === 'simhash-doc' ? simhashBase32(p.fingerprint) : simhashHex(p.fingerprint),
      simhash_blocks: empty || p.words === 0 ? [] : simhashBlockKeys(p.fingerprint, simhashBlocks),
      content_hash: p.content_hash,
      ...(p.core === undefined ? {} : { core: encodeCore(p.core) }),
    };
  };

  const sign = ((text: string): Signature => toSignature(partsOf(text, emptyMinhash(spec.numPerm)))) as Signer;
  sign.settings = settings;
  sign.normalize = normalize;
  sign.signNormalized = (clean: string): Signature => toSignature(partsNormalized(clean, emptyMinhash(spec.numPerm)));
  sign.signParts = (text: string): SignatureParts => partsOf(text, scratchMinhash.fill(MAX_HASH));
  sign.tokenHashes = (text: string): Uint32Array => {
    keepHashes = true;
    kept = new Uint32Array(0);
    try {
      if (partsOf(text, scratchMinhash.fill(MAX_HASH)).tokens === 0) return new Uint32Array(0);
      return kept;
    } finally {
      keepHashes = false;
    }
  };
  return sign;
}

/** The JSON form of a signature, as `near-dup sign` prints it. */
export function signatureToJson(sig: Signature): Record<string, unknown> {
  return { ...sig, minhash: Array.from(sig.minhash) };
}

