// The params keyword: one string stored with every signature that says how it was made, the contract
// between every writer (the signer, the proxy, pipelines in other languages) and every reader (annotate,
// similar, dedup, evaluate, the explorer). Written and read here only, so that a writer and a reader can
// never disagree about a value and drop documents quietly as "other params". Three readings, from the
// most lenient to the strictest:
//   isParameterSet  a parameter set at all (damage otherwise, never "other params")
//   paramsShape     what its stored fields must look like (a version may compare what it cannot sign)
//   paramsOptions   the signer options that make it (signature.ts signerOptionsFromParams checks them)
//
// The form: condenser;seed=S;scheme=X;b=B;r=R;simhash=FmM[;k=K][;sample=N][;tpl=D|;core=D], where the condenser is
// tokenizer:normalizer:hash:permutations, F is `w4` (near-dup's SimHash of word 4-shingles) or a named
// scheme followed by a colon (`simhash-doc:`), and `;k=` and `;sample=` are left out at 1 and 0, the values
// of the versions before them, so that their signatures keep their params. `;tpl=D` names, by its digest
// (12 hex digits), the set of template tokens left out of the MinHash (sketch/template-tokens.ts); absent
// when none is. `;core=D` names one whose tokens stay in the MinHash, each value marked when a template token
// gave it (sketch/core-similarity.ts; the marks in the `core` field).
import { OWN_SIMHASH, presetOfSimhash } from '../presets.js';
import type { KeyEncoding } from '../sketch/lsh.js';
import type { MinhashScheme } from '../sketch/minhash.js';

/** A params keyword taken apart. */
export interface Params {
  /** The condenser spec, tokenizer:normalizer:hash:permutations (canonical names where near-dup wrote it). */
  condenser: string;
  /** MinHash permutations: the condenser's last part, which a reader needs without knowing its other parts. */
  numPerm: number;
  /** The MinHash seed and scheme (datasketch's `MinHash(seed=, scheme=)`). */
  seed: number;
  scheme: string;
  /** LSH bands, and rows per band. */
  bands: number;
  rows: number;
  /** How the SimHash is made: `w4` (word 4-shingles, written in hex) or a named scheme (`simhash-doc`, base32). */
  simhash: string;
  /** SimHash blocks (block keys per document). */
  blocks: number;
  /** How band keys and sample terms are written: 1, the first layout (hex), or 2 (compact base64url). */
  keys: number;
  /** 1 distinct token in this many kept for containment; 0 for none. */
  sample: number;
  /** The digest of the template tokens left out of the MinHash (the first way, `;tpl=`); absent when none are. */
  template?: string;
  /**
   * The digest of the template tokens whose places the signature marks (`;core=`, sketch/core-similarity.ts):
   * the MinHash is of every token and a `core` field holds a bit a value and the core's size.
   */
  core?: string;
}

/** The params keyword of a parameter set. */
export function formatParams(p: Params): string {
  const features = /^w\d+$/.test(p.simhash) ? p.simhash : `${p.simhash}:`;
  const keys = p.keys === 1 ? '' : `;k=${p.keys}`;
  const sample = p.sample === 0 ? '' : `;sample=${p.sample}`;
  const template = p.template === undefined ? (p.core === undefined ? '' : `;core=${p.core}`) : `;tpl=${p.template}`;
  return `${p.condenser};seed=${p.seed};scheme=${p.scheme};b=${p.bands};r=${p.rows};simhash=${features}m${p.blocks}${keys}${sample}${template}`;
}

const PARAMS = /^([^;]+:(\d+));seed=(\d+);scheme=([a-z0-9]+);b=(\d+);r=(\d+);simhash=(w\d+|[a-z-]+:)m(\d+)(?:;k=(\d+))?(?:;sample=(\d+))?(?:;(tpl|core)=([0-9a-f]{12}))?$/;

/** A params keyword taken apart, or undefined when it does not have the form at all. */
export function parseParams(params: string): Params | undefined {
  const m = PARAMS.exec(params);
  if (!m) return undefined;
  return {
    condenser: m[1],
    numPerm: Number(m[2]),
    seed: Number(m[3]),
    scheme: m[4],
    bands: Number(m[5]),
    rows: Number(m[6]),
    simhash: m[7].replace(/:$/, ''),
    blocks: Number(m[8]),
    keys: Number(m[9] ?? 1),
    sample: Number(m[10] ?? 0),
    ...(m[11] === undefined ? {} : m[11] === 'tpl' ? { template: m[12] } : { core: m[12] }),
  };
}

/**
 * Whether a params value is a parameter set at all: a condenser ending in its number of permutations, then
 * the seed, then the rest (near-dup's own, or another version's that this one may not read). Anything else
 * (a number, words, an edit gone wrong) is damage, never "signed with other params". PARAMETER_SET_REGEXP
 * is the same test as the engine's (anchored) regexp query runs it, to find such documents.
 */
const PARAMETER_SET = /^[^;]+:[0-9]+;seed=[0-9]+(;[\s\S]*)?$/;
/**
 * The params keyword's pattern as an engine regexp query takes it (anchored by the engine), to find documents whose
 * params are not a parameter set.
 */
export const PARAMETER_SET_REGEXP = '[^;]+:[0-9]+;seed=[0-9]+(;.*)?';

/** Whether a value is a params keyword (condenser spec and seed, then settings), not checked further. */
export function isParameterSet(value: unknown): value is string {
  return typeof value === 'string' && PARAMETER_SET.test(value);
}

/** What a params value says a signature must look like. */
export interface ParamsShape {
  numPerm: number;
  bands: number;
  rows: number;
  /** SimHash blocks. */
  blocks: number;
  /** 1 token in `sample` kept for containment; 0 for none. */
  sample: number;
  /** How band keys and sample terms are written (1: hex, 2: compact base64url). */
  keys: number;
  /** How the SimHash is written: 16 hex digits (near-dup's own, `simhash=w4`), or base32 (`simhash=simhash-doc:`). */
  simhash: 'hex' | 'base32';
  /** Whether a `core` field comes with the MinHash (`;core=`): its values then carry template bits and the core's size. */
  core: boolean;
}

/** How each SimHash scheme this version reads writes its fingerprint; any `wN` is near-dup's own, in hex. */
const SIMHASH_WRITTEN: Readonly<Record<string, ParamsShape['simhash']>> = { 'simhash-doc': 'base32' };

const shapes = new Map<string, ParamsShape | undefined>();

/** The shape a params value gives, or undefined for one this version cannot read (remembered: it is asked per document). */
export function paramsShape(params: string): ParamsShape | undefined {
  if (shapes.has(params)) return shapes.get(params);
  const p = parseParams(params);
  const simhash = p && (/^w\d+$/.test(p.simhash) ? 'hex' : Object.hasOwn(SIMHASH_WRITTEN, p.simhash) ? SIMHASH_WRITTEN[p.simhash] : undefined);
  const shape = p && simhash && (p.keys === 1 || p.keys === 2) ? { numPerm: p.numPerm, bands: p.bands, rows: p.rows, blocks: p.blocks, keys: p.keys, sample: p.sample, simhash, core: p.core !== undefined } : undefined;
  if (shapes.size < 1000) shapes.set(params, shape);
  return shape;
}

/** The containment sample rate of a params keyword (1 in N), or 0 when its signatures have no sample. */
export function sampleEvery(params: string): number {
  return parseParams(params)?.sample ?? 0;
}

/** The signer options a params keyword stands for (signature.ts SignerOptions, the members it sets). */
export interface ParamsOptions {
  preset?: string;
  condenser: string;
  seed: number;
  scheme: MinhashScheme;
  bands: number;
  rows: number;
  simhashBlocks: number;
  keyEncoding: KeyEncoding;
  containmentSample: number;
  /** The digest of the template tokens a signer needs to sign this way (the set itself is stored with the index). */
  templateDigest?: string;
  /** How it treats them: `core=` marks them, `tpl=` left them out (signature.ts TemplateMode). */
  templateMode?: 'core' | 'narrow';
}

/**
 * The signer options that would write this parameter set, unchecked (signature.ts signerOptionsFromParams
 * signs with them and keeps them only when they give the same keyword back); undefined when the SimHash is
 * neither near-dup's own nor a preset's.
 */
export function paramsOptions(p: Params): ParamsOptions | undefined {
  // A SimHash scheme other than near-dup's own is a preset's.
  const preset = p.simhash === OWN_SIMHASH ? undefined : presetOfSimhash(p.simhash)?.name;
  if (p.simhash !== OWN_SIMHASH && preset === undefined) return undefined;
  return {
    ...(preset === undefined ? {} : { preset }),
    condenser: p.condenser,
    seed: p.seed,
    scheme: p.scheme as MinhashScheme,
    bands: p.bands,
    rows: p.rows,
    simhashBlocks: p.blocks,
    keyEncoding: p.keys as KeyEncoding,
    containmentSample: p.sample,
    ...(p.template === undefined ? {} : { templateDigest: p.template, templateMode: 'narrow' as const }),
    ...(p.core === undefined ? {} : { templateDigest: p.core, templateMode: 'core' as const }),
  };
}
