// Reading a stored signature back. What comes from the index may be damaged: edited by hand, written by
// another version, cut short, or planted. So every value is checked against what the signature's params
// say it must be (how many MinHash values, band keys, SimHash blocks), and reading a document gives either
// a signature or a named reason why not: never an exception, never a silently wrong value. Each command
// leaves such a document out, names it and counts it, and goes on with the others.
import { valueAt } from '../annotation.js';
import { coreWords, decodeCore, withCore } from '../sketch/core-similarity.js';
import { minhashValues, minhashValuesScratch } from '../sketch/lean-minhash.js';
import { isSimhashBase32 } from '../sketch/simhash-doc.js';
import type { Signature } from '../signature.js';
import { type CheckName, signatureFields, STORED, type StoredField, type StoredLayout } from './layout.js';
import { isParameterSet, type ParamsShape, paramsShape } from './params.js';

// Read here, defined with the rest of the params keyword (params.ts).
export { isParameterSet, PARAMETER_SET_REGEXP, type ParamsShape, paramsShape } from './params.js';

/** A document's stored fields by name, as found (unchecked). */
export type RawStored = Partial<Record<StoredField, unknown>>;

/** Why a document's stored fields cannot be used; `otherParams` when they are whole but of other params. */
export class StoredProblem {
  constructor(
    readonly reason: string,
    readonly otherParams = false,
  ) {}
}

/** The stored object of a source document, or why it is not one. */
export function storedIn(source: unknown, layout: StoredLayout): RawStored | StoredProblem {
  const value = valueAt(source, layout.prefix);
  if (value === undefined || value === null) return new StoredProblem(`no near-dup signature (no ${layout.prefix})`);
  if (typeof value !== 'object' || Array.isArray(value)) return new StoredProblem(`${layout.prefix} is ${describe(value)}, not an object`);
  return value as RawStored;
}

/** The stored fields from doc values (a search's `fields`): one value as it is, several as a list (for the checks to refuse). */
export function storedInDocValues(fields: Record<string, unknown[]> | undefined, layout: StoredLayout, names: readonly StoredField[]): RawStored {
  const raw: RawStored = {};
  for (const name of names) {
    const values = fields?.[layout.path(name)];
    if (values !== undefined && values.length > 0) raw[name] = values.length === 1 ? values[0] : values;
  }
  return raw;
}

/**
 * Checks the fields `need` of a stored signature (and those of `optional` that are there) against its
 * params, and against `expectedParams` when given. Undefined when they can be used.
 */
export function checkStored(raw: RawStored, need: readonly StoredField[], expectedParams?: string, optional: readonly StoredField[] = []): StoredProblem | undefined {
  const params = raw.params;
  if (typeof params !== 'string' || params === '') return new StoredProblem(params === undefined ? 'no params' : `params is ${describe(params)}, not a string`);
  // Garbage is damage, counted and named as such, not a document "signed with other params".
  if (!isParameterSet(params)) return new StoredProblem(`params ${describe(params)} is not a parameter set`);
  if (expectedParams !== undefined && params !== expectedParams) return new StoredProblem(`signed with other params ("${params}")`, true);
  const shape = paramsShape(params);
  if (!shape) return new StoredProblem(`params "${params.slice(0, 120)}" are not ones this version of near-dup reads`);
  const required = neededFor(shape, need);
  for (const name of required) if (raw[name] === undefined || raw[name] === null) return new StoredProblem(`no ${name}`);
  for (const name of [...required, ...optional]) {
    const value = raw[name];
    if (value === undefined) continue;
    const check = STORED[name].check;
    const problem = check && CHECKS[check](value, shape);
    if (problem) return new StoredProblem(`${name} ${problem}`);
  }
  const tokens = raw.token_count as number | undefined;
  const bands = raw.bands as unknown[] | undefined;
  if (tokens !== undefined && bands !== undefined && (tokens > 0) !== (bands.length > 0)) return new StoredProblem(`token_count ${tokens} does not go with ${bands.length} band keys`);
  return undefined;
}

/** The fields a reader needs of a signature of this shape: `core` with the MinHash of `;core=` params, never otherwise. */
function neededFor(shape: ParamsShape, need: readonly StoredField[]): readonly StoredField[] {
  const required = need.filter((name) => name !== 'core');
  return shape.core && need.includes('minhash') ? [...required, 'core'] : required;
}

type Check = (value: unknown, shape: ParamsShape) => string | undefined;

const HEX16 = /^[0-9a-f]{16}$/;
/** A sample term, by the params' key encoding (`k`): 8 hex digits in the first layout, 4 base64url characters since. */
const SAMPLE_TERMS = {
  1: { term: /^[0-9a-f]{8}$/, what: '8 hexadecimal digits' },
  2: { term: /^[A-Za-z0-9_-]{4}$/, what: '4 base64url characters' },
};
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The terms of a stored key list (SimHash blocks, containment sample): written as an array, or as one string
 * of terms separated by white space (what the engine's whitespace analyzer splits). Undefined for anything else.
 */
export function keyList(value: unknown): string[] | undefined {
  if (typeof value === 'string') return value.split(/\s+/).filter((term) => term !== '');
  return strings(value) ? value : undefined;
}

const wholeNumber: Check = (v) => (Number.isSafeInteger(v) && (v as number) >= 0 ? undefined : `is ${describe(v)}, not a whole number of at least 0`);
const text: Check = (v) => (typeof v === 'string' && v !== '' ? undefined : `is ${describe(v)}, not a string`);
const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
/** A list of keys, one per band or block, or none (an empty signature). */
const keyCount =
  (count: (shape: ParamsShape) => number, what: string, read: (v: unknown) => string[] | undefined): Check =>
  (v, shape) => {
    const keys = read(v);
    if (!keys) return `is ${describe(v)}, not a list of strings`;
    return keys.length === 0 || keys.length === count(shape) ? undefined : `holds ${keys.length} ${what}, its params say ${count(shape)}`;
  };

/** Each check a stored field's entry (layout.ts) can name. */
const CHECKS: Record<CheckName, Check> = {
  minhash: (v, shape) => {
    if (typeof v !== 'string' || !BASE64.test(v)) return `is ${describe(v)}, not base64`;
    let n: number;
    try {
      n = minhashValuesScratch(v).length;
    } catch (err) {
      return `does not decode: ${(err as Error).message.split(':')[0]}`;
    }
    return n === shape.numPerm ? undefined : `holds ${n} values, its params say ${shape.numPerm}`;
  },
  // Read only for `;core=` params: a core field left from signing another way is not this signature's.
  core: (v, shape) => (!shape.core || (typeof v === 'string' && decodeCore(v, shape.numPerm)) ? undefined : `is ${describe(v)}, not the ${coreWords(shape.numPerm) * 2} bytes of base64 its params (core=) say`),
  simhash: (v, shape) =>
    shape.simhash === 'base32'
      ? typeof v === 'string' && isSimhashBase32(v) ? undefined : `is ${describe(v)}, not 13 base32 characters (A-Z, 2-7, either case), as its params (simhash-doc) say`
      : typeof v === 'string' && HEX16.test(v) ? undefined : `is ${describe(v)}, not 16 hexadecimal digits`,
  bandKeys: keyCount((s) => s.bands, 'band keys', (v) => (strings(v) ? v : undefined)),
  blockKeys: keyCount((s) => s.blocks, 'SimHash blocks', keyList),
  text,
  wholeNumber,
  sampleTerms: (v, shape) => {
    const { term, what } = SAMPLE_TERMS[shape.keys === 1 ? 1 : 2];
    const terms = keyList(v);
    return terms?.every((t) => term.test(t)) ? undefined : `is ${describe(v)}, not a list of ${what} each`;
  },
  strings: (v) => (strings(v) ? undefined : `is ${describe(v)}, not a list of strings`),
  date: (v) => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? undefined : `is ${describe(v)}, not a date`),
};

/**
 * The values a stored signature is compared by, of a stored object checkStored passed with `minhash`
 * needed: the MinHash values, followed for `;core=` params by the core field's words (withCore).
 */
export function storedValues(raw: RawStored): Uint32Array {
  return valuesWithCore(minhashValues(raw.minhash as string), raw);
}

/** `values` (the stored object's decoded MinHash), followed by its core field's words when its params have one. */
export function valuesWithCore(values: Uint32Array, raw: RawStored): Uint32Array {
  const core = storedCore(raw);
  return core ? withCore(values, core) : values;
}

/** The core field's words of a checked stored object, or undefined when its params have none. */
export function storedCore(raw: RawStored): Uint32Array | undefined {
  const shape = paramsShape(raw.params as string);
  return shape?.core ? decodeCore(raw.core as string, shape.numPerm) : undefined;
}

/** A value as a message shows it: short, and its kind. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list (${JSON.stringify(value).slice(0, 40)}${JSON.stringify(value).length > 40 ? '...' : ''})`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `"${value.slice(0, 24)}${value.length > 24 ? '...' : ''}"`;
  return `${typeof value} ${String(value)}`;
}

/** The fields reading a signature back needs, and those it reads when they are there (layout.ts). */
const NEEDED = signatureFields('needed');
const WHEN_THERE = signatureFields('when-there');

/** The fields of a whole signature, as annotate writes them (its time stamp aside). */
export const SIGNATURE_FIELDS: readonly StoredField[] = [...NEEDED, ...WHEN_THERE];

/**
 * A whole stored signature, checked and decoded: what a lookup by a stored document needs, and what a lookup
 * by a text compares (storedSignatureOf).
 */
export interface StoredSignature {
  params: string;
  /** The MinHash values (`minhash`, decoded), followed for `;core=` params by the core field's words. */
  values: Uint32Array;
  simhash: string;
  bands: string[];
  /** The SimHash block keys (`simhash_blocks`, as a list). */
  blocks: string[];
  /** `token_count`, `distinct_tokens` (0 when not stored), and the sample terms (none when not stored). */
  tokens: number;
  distinct: number;
  sample: string[];
  contentHash: string;
}

/** The signature of a stored object (see storedIn), or why it cannot be used. */
export function readSignature(raw: RawStored, expectedParams?: string): StoredSignature | StoredProblem {
  const problem = checkStored(raw, NEEDED, expectedParams, WHEN_THERE);
  if (problem) return problem;
  return {
    params: raw.params as string,
    values: storedValues(raw),
    simhash: raw.simhash as string,
    bands: raw.bands as string[],
    blocks: keyList(raw.simhash_blocks) as string[],
    tokens: raw.token_count as number,
    distinct: (raw.distinct_tokens as number | undefined) ?? 0,
    sample: keyList(raw.sample) ?? [],
    contentHash: raw.content_hash as string,
  };
}

/** A signature just made, as it would read back once stored with these params (what a lookup by text compares). */
export function storedSignatureOf(sig: Signature, params: string): StoredSignature {
  return {
    params,
    values: valuesWithCore(sig.minhash, { params, core: sig.core }),
    simhash: sig.simhash,
    bands: sig.bands,
    blocks: sig.simhash_blocks,
    tokens: sig.tokens,
    distinct: sig.distinct_tokens,
    sample: sig.sample,
    contentHash: sig.content_hash,
  };
}
