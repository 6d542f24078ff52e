// Where an index keeps its template tokens (sketch/template-tokens.ts), so that whoever signs for the index
// later (similar, the proxy, ingest, sign --for-index, annotate on another machine) finds the set that the
// params keyword's tpl=<digest> names: in a small hidden index of near-dup's own, `near-dup-templates`, one
// document per data stream, rollover alias or concrete index (below) and draw (id: that key and a digest of
// the condenser, share, minimum count and sample asked), written with `_create`.
//
// Why not the index mapping's `_meta`, where the sets were first kept: an update of a mapping replaces
// `_meta` whole and the engines have no compare-and-set for it, so a store was a read of `_meta` and a put
// of all of it. Two runs storing at once lost one set (its signatures then named a set no one could load),
// and a key a user put in `_meta` between the two calls was lost too; no read-back and retry closes that
// window (the other run may have checked before the loss). A document written with `_create` is atomic: two
// draws of one request meet at one id, the first kept and the second given it (so both runs sign with one
// set); two draws of different requests are two documents. It also takes the 53 KB of a set of 10,000 out of
// the mapping that every node holds in its cluster state.
//
// Kept under what the index's documents are written through, so that the indices a name rolls over to
// share its set: a data stream's backing indices under the data stream's name, and the indices of an alias
// that marks its write index (is_write_index, as rollover keeps it) under the alias's name; so a rolled-over
// backing index (a new uuid) is signed with the set its data stream was drawn with. Any other index under
// its uuid, not its name, so that an index deleted and made again under its name does not find the old
// index's sets (none of its documents was signed with them). Sets kept in `_meta` by earlier versions are
// still read (never written).
import { hash } from 'node:crypto';
import { UsageError, UserError } from '../errors.js';
import type { HttpMethod } from '../engine/client.js';
import { describeRefusal, engineAnswerOf, EngineResponseError } from '../engine/errors.js';
import { ownValue } from '../own-keys.js';
import { resolveSignerSettings, type SignerOptions } from '../signature.js';
import { DEFAULT_TEMPLATE_MIN_COUNT, type TemplateTokens, templateTokens } from '../sketch/template-tokens.js';
import { DEFAULT_MAX_TRACKED } from '../sketch/token-counts.js';
import { plural } from '../plural.js';

/** The `_meta` key under which earlier versions kept the template sets, by digest (read, never written). */
export const TEMPLATES_META_KEY = 'near_dup_templates';

/** What a set was drawn for: the condenser its hashes are tokens of, and the sample size asked for. */
export interface TemplateDraw {
  condenser: string;
  sampleAsked: number;
}

/** Documents a template is drawn from, by default. */
export const DEFAULT_TEMPLATE_SAMPLE = 10_000;

/** A template asked for (annotate, ingest and the proxy's --template-share and --template-sample). */
export interface TemplateRequest {
  /** A token in more than this share of the sampled documents is template text (0.005 on templated pages). */
  share: number;
  /** How many documents (the first read) the set is drawn from (default 10,000). */
  sample?: number;
  /**
   * Draw a set only from a sample of at least this many documents, else sign without one; and a store that
   * refuses this user signs without one too (said, never failed). What the default request asks: a share
   * of a small sample is a few documents, and one document's own copies would be taken for its template.
   * Absent (a share given by the user): a set is drawn from whatever the sample holds, and a refusal fails.
   */
  atLeast?: number;
  /** Sign with a set the index keeps for this draw, never draw one (annotate --follow's passes after the first). */
  keptOnly?: boolean;
}

/**
 * The template tokens annotate, ingest and the proxy sign with when not told otherwise: the tokens in more
 * than 0.5% of the first 10,000 documents, drawn when there are 2,000 or more of them (ten documents share a
 * token for it to be template). Chosen on the labelled corpora (docs/finding.md, "Quality on labelled
 * corpora"): pair precision 0.96 on templated pages where word sets gave 0.03.
 */
export const DEFAULT_TEMPLATE_REQUEST: Readonly<TemplateRequest> = Object.freeze({ share: 0.005, atLeast: 2000 });

/** Why a default request signed without template tokens: too few documents to draw them from. */
export function tooFewNote(index: string, sample: number, asked: TemplateRequest): string {
  return `signed without template tokens: "${index}" has ${plural(sample, 'document')}, fewer than the ${(asked.atLeast ?? 0).toLocaleString('en-US')} they are drawn from by default (annotate --force draws them once it has more)`;
}

/** Why a default request signed without template tokens: the store refused this user. */
export function refusedNote(err: Error): string {
  return `signed without template tokens, as the template store refused this user (${err.message}); --template-share 0 says so without asking`;
}

/** Whether an error is the store (or the index) refusing this user: a default request then signs without a set. */
export function isRefusal(err: unknown): boolean {
  return engineAnswerOf(err)?.refusal !== undefined;
}

/**
 * Why a job signs without a set after `err`: a default request (TemplateRequest.atLeast) refused by the store.
 * @throws err itself, for anything else (a share the user gave fails on a refusal, as every error).
 */
export function signedWithoutOn(err: unknown, asked: TemplateRequest): string {
  if (asked.atLeast === undefined || !isRefusal(err)) throw err;
  return refusedNote(err as Error);
}

/** What a set is drawn for: the condenser of these signer options (without any set), the sample asked, the share. */
export function templateDraw(signer: SignerOptions, asked: TemplateRequest): TemplateDraw & { share: number; minCount: number } {
  const { condenser } = resolveSignerSettings({ ...signer, template: undefined, templateDigest: undefined });
  return { condenser, sampleAsked: asked.sample ?? DEFAULT_TEMPLATE_SAMPLE, share: asked.share, minCount: DEFAULT_TEMPLATE_MIN_COUNT };
}

/** One set as it is kept (in near-dup-templates, and in the `_meta` of earlier versions). */
export interface StoredTemplate {
  condenser?: string;
  sample_asked?: number;
  share: number;
  min_count: number;
  sample: number;
  /** How many hashes `hashes` holds (a check on the decoding). */
  count: number;
  /** The sorted hashes, 4 little-endian bytes each, base64. */
  hashes: string;
}

/** A template set as it is kept. */
export function storedTemplate(template: TemplateTokens, draw?: TemplateDraw): StoredTemplate {
  const bytes = Buffer.alloc(template.hashes.length * 4);
  for (let i = 0; i < template.hashes.length; i++) bytes.writeUInt32LE(template.hashes[i], i * 4);
  const drawn = draw ? { condenser: draw.condenser, sample_asked: draw.sampleAsked } : {};
  return { ...drawn, share: template.share, min_count: template.minCount, sample: template.sample, count: template.hashes.length, hashes: bytes.toString('base64') };
}

/**
 * The most hashes a drawn set holds: the sampler counts at most this many tokens (sketch/token-counts.ts). A
 * larger set was not drawn by near-dup, and is not decoded (each signing task would be given a copy).
 */
export const MAX_TEMPLATE_HASHES = DEFAULT_MAX_TRACKED;

/** The length of the base64 text of `count` hashes. */
const base64Length = (count: number) => 4 * Math.ceil((count * 4) / 3);

/** A set read back; undefined when what is there is not the set of that digest (damaged, or edited by hand). */
export function templateOfStored(digest: string, stored: unknown): TemplateTokens | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const { share, min_count, sample, count, hashes } = stored as Partial<StoredTemplate>;
  if (typeof hashes !== 'string' || !Number.isSafeInteger(count) || (count as number) < 0 || typeof share !== 'number' || typeof min_count !== 'number' || typeof sample !== 'number') return undefined;
  if ((count as number) > MAX_TEMPLATE_HASHES || hashes.length !== base64Length(count as number)) return undefined;
  const bytes = Buffer.from(hashes, 'base64');
  if (bytes.length !== (count as number) * 4) return undefined;
  const values = new Uint32Array(count as number);
  for (let i = 0; i < (count as number); i++) values[i] = bytes.readUInt32LE(i * 4);
  const template = templateTokens(values, { share, minCount: min_count, sample });
  return template.digest === digest ? template : undefined;
}

/** near-dup's index of template sets. */
export const TEMPLATE_INDEX = 'near-dup-templates';

/** What the store needs of a connection: an engine client, or the proxy's requests with a client's credentials. */
export interface TemplateAccess {
  request<T = unknown>(method: HttpMethod, path: string, body?: unknown): Promise<T>;
}

/** A set as near-dup-templates holds it: the set, what it was drawn for, and what it is kept for. */
interface TemplateDocument extends StoredTemplate {
  /** The data stream, alias or index it is kept for, by name. */
  index: string;
  /**
   * What it is kept under and found by (setOwners): the index's uuid, `data-stream:NAME` or `alias:NAME`. The
   * field kept the name it had when it held uuids only, so that the store's mapping is the same.
   */
  uuid: string;
  digest: string;
  stored_at: string;
}

const STORE_PATH = `/${TEMPLATE_INDEX}`;

/**
 * Keeps a template set for every concrete index that `index` names. Gives the set kept: this one, or the
 * one another run kept first for the same draw (whose signatures this run must then match).
 */
export async function storeTemplate(given: TemplateAccess, index: string, template: TemplateTokens, draw?: TemplateDraw): Promise<TemplateTokens> {
  const access = refusalsNamed(given);
  const indices = await concreteIndices(access, index);
  if (indices.length === 0) throw new UsageError(`cannot keep template tokens for "${index}": no index has that name yet (a data stream is made by its first document); write a first document, or annotate it afterwards with --template-share`);
  await ensureStoreIndex(access);
  let kept: TemplateTokens | undefined;
  // One set a key: the backing indices of a data stream share one document.
  const owners = new Map(indices.map((owners) => [owners[0].key, owners[0].name]));
  for (const [key, name] of owners) {
    const id = documentId(key, template, draw);
    const doc: TemplateDocument = { ...storedTemplate(template, draw), index: name, uuid: key, digest: template.digest, stored_at: new Date().toISOString() };
    try {
      // Visible to searches on return: the signatures that name it are written after.
      await access.request('PUT', `${STORE_PATH}/_create/${encodeURIComponent(id)}?refresh=wait_for`, doc);
      kept ??= template;
    } catch (err) {
      if (!(err instanceof EngineResponseError && err.statusCode === 409)) throw err;
      kept ??= await keptDocument(access, id, name, draw);
    }
  }
  return kept ?? template;
}

/**
 * The template set of `digest` that `index` keeps (the first of its concrete indices that has it).
 * @throws {UsageError} none of them has it, or what is there is damaged: naming the index and what to do.
 */
export async function loadTemplate(given: TemplateAccess, index: string, digest: string): Promise<TemplateTokens> {
  const access = refusalsNamed(given);
  const keys = await keysBehind(access, index);
  const found = await searchStore(access, { bool: { filter: [{ terms: { uuid: [...keys] } }, { term: { digest } }] } });
  for (const doc of found) checkSize(doc, index);
  const template = found.map((d) => templateOfStored(digest, d)).find((t) => t !== undefined) ?? legacyTemplate(await legacySets(access, index), digest);
  if (template instanceof DamagedSet || (template === undefined && found.length > 0)) {
    const where = template instanceof DamagedSet ? `the mapping of "${template.index}" (_meta.${TEMPLATES_META_KEY})` : `${TEMPLATE_INDEX} for "${found[0].index}"`;
    throw new UsageError(`the template tokens ${digest} in ${where} are not that set any more; sign the index again with annotate --force and a new template`);
  }
  if (template) return template;
  throw new UsageError(`the signatures of "${index}" leave out the template tokens ${digest} (params tpl=${digest}), but ${TEMPLATE_INDEX} keeps no such set for "${index}"; sign the index again with annotate --force`);
}

/** How a kept set was drawn: the share and the sample asked for (annotate's --template-share and --template-sample). */
export interface KeptDraw {
  share: number;
  /** Absent when the set was kept by a version that did not record it. */
  sampleAsked?: number;
}

/**
 * How the set of `digest` that `index` keeps was drawn, so that a command that signs the index again can
 * ask for the same set; undefined when no set of that digest is kept for it, or what is kept is not a draw.
 */
export async function keptDraw(given: TemplateAccess, index: string, digest: string): Promise<KeptDraw | undefined> {
  const access = refusalsNamed(given);
  const keys = await keysBehind(access, index);
  const found: unknown[] = await searchStore(access, { bool: { filter: [{ terms: { uuid: [...keys] } }, { term: { digest } }] } });
  found.push((await legacySets(access, index))[digest]);
  for (const doc of found) {
    const { share, sample_asked } = (doc ?? {}) as Partial<StoredTemplate>;
    if (typeof share !== 'number' || !(share > 0 && share < 1)) continue;
    return Number.isSafeInteger(sample_asked) && (sample_asked as number) > 0 ? { share, sampleAsked: sample_asked } : { share };
  }
  return undefined;
}

/**
 * A set `index` keeps that was drawn for the same condenser, share, minimum count and sample size (the
 * first found), so that every run and every process signing the index uses one set; undefined when none is.
 */
export async function findTemplate(given: TemplateAccess, index: string, draw: TemplateDraw & { share: number; minCount: number }): Promise<TemplateTokens | undefined> {
  const access = refusalsNamed(given);
  const keys = await keysBehind(access, index);
  const ids = [...keys].map((key) => documentId(key, undefined, draw));
  for (const doc of await getDocuments(access, ids)) {
    checkSize(doc, index);
    // Anyone who may write the store may write at an id (it is of public values): only a set stored for this draw and key is used.
    const template = storedFor(doc, draw) ? templateOfStored(doc.digest, doc) : undefined;
    if (template) return template;
  }
  for (const [digest, stored] of Object.entries(await legacySets(access, index))) {
    const s = stored as Partial<StoredTemplate> | null;
    if (s?.condenser !== draw.condenser || s.sample_asked !== draw.sampleAsked || s.share !== draw.share || s.min_count !== draw.minCount) continue;
    const template = templateOfStored(digest, stored);
    if (template) return template;
  }
  return undefined;
}

/**
 * The store's requests, a refusal for want of a privilege made one line naming it and where to grant it
 * (the store's requests are not the job's, whose refusals the job names).
 */
export function refusalsNamed(access: TemplateAccess): TemplateAccess {
  return {
    request: async <T>(method: HttpMethod, path: string, body?: unknown) => {
      try {
        return await access.request<T>(method, path, body);
      } catch (err) {
        const refusal = err instanceof EngineResponseError ? err.refusal : undefined;
        if (!refusal || !(err instanceof EngineResponseError)) throw err;
        const index = path.startsWith(STORE_PATH) ? TEMPLATE_INDEX : decodeURIComponent(path.split(/[/?]/)[1] ?? '');
        throw new UserError(describeRefusal(refusal, { url: err.url, method, path: path.split('?')[0], index }), { cause: err });
      }
    },
  };
}

/** A name a set is kept under (a data stream, a rollover alias, an index), and its key in near-dup-templates. */
export interface SetOwner {
  name: string;
  key: string;
}

/** What GET /{name} says of each index behind the name, as far as the store asks. */
export type IndexAnswer = Record<string, { settings?: { index?: { uuid?: string } }; aliases?: Record<string, { is_write_index?: boolean }>; data_stream?: string }>;

/**
 * What the sets of each concrete index behind a name (an alias, a data stream, a pattern) are kept under,
 * the one they are stored under first; none for a name not there.
 */
async function concreteIndices(access: TemplateAccess, index: string): Promise<SetOwner[][]> {
  let answer: IndexAnswer;
  try {
    answer = await access.request('GET', `/${encodeURIComponent(index)}?filter_path=*.settings.index.uuid,*.aliases,*.data_stream`);
  } catch (err) {
    if (err instanceof EngineResponseError && err.type === 'index_not_found_exception') return [];
    throw err;
  }
  return Object.entries(answer ?? {})
    .filter(([, i]) => typeof i.settings?.index?.uuid === 'string')
    .map(([name, i]) => setOwners(name, i));
}

/** Every key the sets of the indices behind a name may be kept under. */
async function keysBehind(access: TemplateAccess, index: string): Promise<Set<string>> {
  return new Set((await concreteIndices(access, index)).flat().map((o) => o.key));
}

/**
 * What one index's sets are kept under, first the one they are stored under: its data stream; else each
 * alias that marks it as a write index or not (as rollover leaves the alias on every index it rolled over
 * from), by name; then its uuid (a plain index's only key, and what the first version kept every set under).
 */
export function setOwners(name: string, index: IndexAnswer[string]): SetOwner[] {
  const owners: SetOwner[] = [];
  if (typeof index.data_stream === 'string') owners.push({ name: index.data_stream, key: `data-stream:${index.data_stream}` });
  // By name: the same order whoever asks.
  const marked = Object.keys(index.aliases ?? {}).filter((alias) => typeof index.aliases?.[alias]?.is_write_index === 'boolean').sort();
  if (owners.length === 0) owners.push(...marked.map((alias) => ({ name: alias, key: `alias:${alias}` })));
  owners.push({ name, key: index.settings?.index?.uuid as string });
  return owners;
}

/**
 * One document a key (a uuid, `data-stream:NAME`, `alias:NAME`: no index name holds a colon) and draw; a
 * set stored without its draw, by its digest. The draw's values are hashed, not written out: a condenser
 * spec may hold any character.
 */
function documentId(key: string, template: TemplateTokens | undefined, draw: (TemplateDraw & { share?: number; minCount?: number }) | undefined): string {
  if (!draw) return `${key}.set-${template?.digest}`;
  const share = draw.share ?? template?.share;
  const minCount = draw.minCount ?? template?.minCount;
  return `${key}.${hash('sha1', JSON.stringify([draw.condenser, share, minCount, draw.sampleAsked])).slice(0, 20)}`;
}

/** One shard, a copy where there is a second node, hidden from wildcards; the sets in `_source` only, what they are kept under (uuid) and digest to find them by. */
async function ensureStoreIndex(access: TemplateAccess): Promise<void> {
  try {
    await access.request('GET', `${STORE_PATH}/_settings?filter_path=*.settings.index.uuid&expand_wildcards=all`);
    return;
  } catch (err) {
    if (!(err instanceof EngineResponseError && err.type === 'index_not_found_exception')) throw err;
  }
  try {
    await access.request('PUT', STORE_PATH, {
      settings: { number_of_shards: 1, auto_expand_replicas: '0-1', 'index.hidden': true },
      mappings: { dynamic: false, properties: { uuid: { type: 'keyword' }, digest: { type: 'keyword' } } },
    });
  } catch (err) {
    // Made by another run meanwhile.
    if (!(err instanceof EngineResponseError && err.type === 'resource_already_exists_exception')) throw err;
  }
}

/** The set of a document another run created first; damage there, or a set stored for another draw or key, is said, not signed with. */
async function keptDocument(access: TemplateAccess, id: string, index: string, draw: TemplateDraw | undefined): Promise<TemplateTokens> {
  const [doc] = await getDocuments(access, [id]);
  if (doc) checkSize(doc, index);
  if (doc && draw && !storedFor(doc, draw)) throw new UsageError(`the document ${id} of ${TEMPLATE_INDEX} for "${index}" was not stored for this draw (condenser, share, minimum count, sample) and index; delete it and run again`);
  const template = doc && templateOfStored(doc.digest, doc);
  if (!template) throw new UsageError(`the template tokens kept in ${TEMPLATE_INDEX} for "${index}" (document ${id}) are damaged; delete that document and run again`);
  return template;
}

/** Whether a document is the set of `draw` for the key of its id (what the id was made of). */
function storedFor(doc: KeptDocument, draw: TemplateDraw & { share?: number; minCount?: number }): boolean {
  const key = doc.id.slice(0, doc.id.lastIndexOf('.'));
  const same = doc.condenser === draw.condenser && doc.sample_asked === draw.sampleAsked && doc.uuid === key;
  return same && (draw.share === undefined || doc.share === draw.share) && (draw.minCount === undefined || doc.min_count === draw.minCount);
}

/** A set larger than any draw is refused before it is decoded: one line naming the index and the fix. */
function checkSize(doc: Partial<TemplateDocument> & { id?: string }, index: string): void {
  const { count, hashes } = doc;
  if (!(typeof count === 'number' && count > MAX_TEMPLATE_HASHES) && !(typeof hashes === 'string' && hashes.length > base64Length(MAX_TEMPLATE_HASHES))) return;
  const size = typeof count === 'number' && count > MAX_TEMPLATE_HASHES ? `hold ${count} hashes` : `hold a text of ${(hashes as string).length} characters`;
  throw new UsageError(
    `the template tokens kept in ${TEMPLATE_INDEX} for "${index}"${doc.id ? ` (document ${doc.id})` : ''} ${size}, more than near-dup ever draws (${MAX_TEMPLATE_HASHES}): they were not drawn by near-dup; delete that document from ${TEMPLATE_INDEX} and sign the index again with annotate --force --template-share`,
  );
}

/** A document of near-dup-templates, with its id. */
type KeptDocument = TemplateDocument & { id: string };

/** The documents of these ids that near-dup-templates holds (none when it is not there). */
async function getDocuments(access: TemplateAccess, ids: string[]): Promise<KeptDocument[]> {
  if (ids.length === 0) return [];
  let answer: { docs: Array<{ _id?: string; found?: boolean; _source?: TemplateDocument; error?: { type?: string; reason?: string } }> };
  try {
    answer = await access.request('POST', `${STORE_PATH}/_mget`, { ids });
  } catch (err) {
    if (err instanceof EngineResponseError && err.type === 'index_not_found_exception') return [];
    throw err;
  }
  // A missing index may be said per document (200); a refusal too, which is not "no set".
  const refused = answer.docs.find((d) => d.error !== undefined && d.error.type !== 'index_not_found_exception');
  if (refused) {
    // A refusal for want of a privilege stays one (isRefusal): a default request then signs without a set.
    const cause = new EngineResponseError(403, refused.error?.type, refused.error?.reason, 'POST', `${STORE_PATH}/_mget`, '', { error: refused.error });
    throw new UserError(`cannot read the template tokens in ${TEMPLATE_INDEX}: ${refused.error?.reason ?? refused.error?.type}; give this user read on ${TEMPLATE_INDEX}`, { cause });
  }
  // The id asked for, in its order (the engines answer in the order asked).
  return answer.docs.flatMap((d, i) => (d.found && d._source ? [{ ...d._source, id: ids[i] }] : []));
}

async function searchStore(access: TemplateAccess, query: Record<string, unknown>): Promise<TemplateDocument[]> {
  try {
    const answer = await access.request<{ hits: { hits: Array<{ _source: TemplateDocument }> } }>('POST', `${STORE_PATH}/_search`, { size: 100, query });
    return answer.hits.hits.map((h) => h._source);
  } catch (err) {
    if (err instanceof EngineResponseError && err.type === 'index_not_found_exception') return [];
    throw err;
  }
}

/** The sets earlier versions kept in the `_meta` of the mappings behind `index`, by digest, with the index they are in. */
async function legacySets(access: TemplateAccess, index: string): Promise<Record<string, unknown>> {
  let mappings: Record<string, { mappings?: { _meta?: Record<string, unknown> } }>;
  try {
    mappings = await access.request('GET', `/${encodeURIComponent(index)}/_mapping`);
  } catch (err) {
    if (err instanceof EngineResponseError && err.type === 'index_not_found_exception') return {};
    throw err;
  }
  const sets: Record<string, unknown> = {};
  for (const [name, { mappings: mapping }] of Object.entries(mappings ?? {})) {
    const kept = ownValue(mapping?._meta ?? {}, TEMPLATES_META_KEY) as Record<string, unknown> | undefined;
    for (const [digest, stored] of Object.entries(kept ?? {})) if (!(digest in sets)) sets[digest] = typeof stored === 'object' && stored !== null ? { ...stored, index: name } : stored;
  }
  return sets;
}

/** A set of `_meta` that is there but not the set of its digest. */
class DamagedSet {
  constructor(readonly index: string) {}
}

function legacyTemplate(sets: Record<string, unknown>, digest: string): TemplateTokens | DamagedSet | undefined {
  const stored = ownValue(sets, digest);
  if (stored === undefined) return undefined;
  return templateOfStored(digest, stored) ?? new DamagedSet(String((stored as { index?: unknown } | null)?.index ?? ''));
}
