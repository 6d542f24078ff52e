// A client's _bulk through the proxy: read as it streams in, signed in groups on the signing threads (in
// order, a few groups ahead), and written upstream as it is signed, in parts of about --max-upstream-bytes
// sent one after the other so the engine applies the items in the client's order. The client gets the
// engine's answer as it is when it went in one part and nothing was refused; otherwise the parts' answers
// joined, with each refused document answered in its place.
//
// Each item's index is decided as the engine decides it (targets.ts): its own `_index`, else the index of
// the path, else the last `index` of the query string. A name with date math is resolved once for the
// request and sent on resolved (in the action line, the path or the query string), so the engine writes
// where the proxy decided.
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { ClientGoneError, onClientGone, passableHeaders, pipeAnswer, readBody } from './forward.js';
import type { SignedSource, SourceKind } from '../signing/sign-sources.js';
import type { KeyLists } from '../stored/write.js';
import type { SignerOptions } from '../signature.js';
import { type BulkItem, bulkItems, type RawBytes, withIndex } from './bulk-items.js';
import { type BulkAnswer, bulkAnswerChunks, notAppliedAnswer, REFUSAL_TYPE, type RefusedItem } from './bulk-response.js';
import { forwardedBody, type ProxyContext } from './context.js';
import { ProxyRefusal } from './refusal.js';
import { lastParam, type QueryParam, queryString, rawPath, withFirstSegment } from './raw-path.js';
import type { Target } from './targets.js';
import { type PartAnswer, UpstreamParts } from './upstream-parts.js';
import { LARGE_BYTES } from './budget-meter.js';

const GROUP_ITEMS = 200;
const GROUP_BYTES = 512 * 1024;

type Entry = BulkItem | RawBytes;

interface SignedGroup {
  entries: Entry[];
  /** It holds a large line (budget-meter.ts): once written, its part is sent and answered before more is read. */
  large: boolean;
  /** The outcome per entry, for the items that were signed. */
  outcomes: Map<Entry, SignedSource>;
  /** Where each item goes (deletes aside: they write no document). */
  targets: Map<Entry, Target>;
}

/** What a bulk request shares: its client's headers, and one time for the date math of all its items (the engines take one too). */
interface BulkRequest {
  headers: readonly string[];
  now: number;
}

/**
 * `pathIndex`: the index of the path (/{index}/_bulk); `params`: the query string as the engines read it;
 * `largeDone`: called when the large lines read so far are done with (sent and answered).
 */
export async function handleBulk(ctx: ProxyContext, req: http.IncomingMessage, body: Readable, res: http.ServerResponse, pathIndex: string | undefined, params: QueryParam[], largeDone: () => void = () => undefined): Promise<void> {
  const started = performance.now();
  ctx.stats.requests.bulk++;
  const request: BulkRequest = { headers: req.rawHeaders, now: Date.now() };
  // The proxy may have to read every item of the answer: filter_path is applied by the proxy, not the engine.
  const filterPath = lastParam(params, 'filter_path') ?? null;
  const { defaultIndex, pathAndQuery } = await forwardedTarget(ctx, req.url ?? '/', pathIndex, params, request);
  const headers = passableHeaders(req.rawHeaders, ['content-length', 'content-encoding', 'accept-encoding']);
  const parts = new UpstreamParts(ctx.upstream, req.method ?? 'POST', pathAndQuery, headers, ctx.maxUpstreamBytes, ctx.inFlight);
  const refused: RefusedItem[] = [];
  // What each item sent upstream was counted as (signed, cleared), in the order the engine answers them:
  // what the engine refused is then counted as refused, not as signed. Unless bytes went on unread (then
  // the engine's items cannot be told apart).
  const counted: Counted[] = [];
  let aligned = true;
  onClientGone(res, () => {
    parts.abort();
    body.destroy(new ClientGoneError());
  });

  try {
    for await (const group of signedGroups(ctx, bulkItems(body, defaultIndex, ctx.maxLineBytes), request)) {
      for (const entry of group.entries) {
        if (entry.kind === 'raw') {
          if (entry.unreadable) {
            unreadableAction(ctx, entry.unreadable.line);
            aligned = false;
          }
          await parts.write([entry.bytes]);
          continue;
        }
        const target = group.targets.get(entry);
        const outcome = group.outcomes.get(entry);
        const source = forwardedSource(ctx, entry, outcome, target, refused);
        if (source === null) continue;
        counted.push(target?.kind !== 'undecided' && (outcome?.outcome === 'signed' || outcome?.outcome === 'cleared') ? outcome.outcome : undefined);
        const { verb, id } = entry;
        const index = target && target.kind !== 'undecided' ? target.index : entry.index;
        const action = actionLine(entry, target);
        await parts.write(source === undefined ? [action, NEWLINE] : [action, NEWLINE, source, NEWLINE], { verb, index, id });
      }
      if (group.large) {
        await parts.flush();
        largeDone();
      }
    }
    const statuses = await answer(res, await parts.finish(refused.length === 0), refused, filterPath);
    if (aligned) countNotStored(ctx, counted, statuses);
  } catch (err) {
    parts.abort();
    body.destroy();
    // Parts may have been applied by now (all of them, if it failed while answering): the client is told how many.
    throw Object.assign(err as Error, { appliedItems: parts.answeredItems });
  }
  ctx.stats.addLatency(performance.now() - started - parts.waitedMs);
}

/**
 * The request's default index, and the path and query the parts go to: without filter_path, and with a
 * default index that has date math resolved in its place (when the proxy can resolve it; when it cannot,
 * the items that take it are undecided, each).
 */
async function forwardedTarget(ctx: ProxyContext, target: string, pathIndex: string | undefined, params: QueryParam[], request: BulkRequest): Promise<{ defaultIndex: string | undefined; pathAndQuery: string }> {
  const queryIndex = lastParam(params, 'index');
  const given = pathIndex ?? queryIndex;
  let path = rawPath(target);
  const drop = ['filter_path'];
  const add: string[] = [];
  let defaultIndex = given;
  if (given !== undefined) {
    const decided = await ctx.targets.decide(given, request.headers, request.now);
    if (decided.kind !== 'undecided' && decided.rewritten) {
      defaultIndex = decided.index;
      if (pathIndex !== undefined) path = withFirstSegment(path, decided.index);
      else {
        drop.push('index');
        add.push(`index=${encodeURIComponent(decided.index)}`);
      }
    }
  }
  return { defaultIndex, pathAndQuery: path + queryString(params, drop, add) };
}

/** The action line to send: as it came, or with the index its date math resolved to. */
function actionLine(item: BulkItem, target: Target | undefined): Uint8Array {
  if (!target || target.kind === 'undecided' || !target.rewritten || !item.ownIndex || !item.indexSpan) return item.actionLine;
  return withIndex(item.actionLine, item.indexSpan, target.index);
}

const NEWLINE = new Uint8Array([0x0a]);

/** An action line that cannot be read: the rest of the body is refused (--on-error reject), or passed on unread and counted. */
function unreadableAction(ctx: ProxyContext, line: number): void {
  if (ctx.onError === 'pass') {
    ctx.stats.requests.unread++;
    return;
  }
  throw new ProxyRefusal(400, REFUSAL_TYPE, `near-dup cannot read the bulk action on line ${line} (a JSON object naming index, create, update or delete, with _index a name); it refused the request from there on rather than let unsigned documents through. Fix that line, or run the proxy with --on-error pass`);
}

/**
 * The source line to forward (undefined: the item has none; null: refused, not forwarded); counts the item.
 * An item whose index is undecided goes on only when it would not have been signed anyway (a script, an
 * update that leaves the text alone); otherwise it is refused (reject) or sent on unsigned (pass).
 */
function forwardedSource(ctx: ProxyContext, item: BulkItem, outcome: SignedSource | undefined, target: Target | undefined, refused: RefusedItem[]): Uint8Array | undefined | null {
  const counts = ctx.stats.documents;
  if (target?.kind === 'undecided') {
    if (!outcome || (outcome.outcome === 'untouched' && outcome.source === undefined)) {
      counts.untouched++;
      return item.sourceLine;
    }
    if (ctx.onError === 'pass') {
      counts.passed++;
      return item.sourceLine;
    }
    counts.rejected++;
    refused.push({ position: item.position, verb: item.verb, index: item.index, id: item.id, reason: target.reason });
    return null;
  }
  if (!outcome) {
    if (target ? target.kind === 'signed' : item.index !== undefined && ctx.matches(item.index)) counts.untouched++;
    else counts.other_indices++;
    return item.sourceLine;
  }
  const forwarded = forwardedBody(ctx, outcome, item.sourceLine as Uint8Array); // signed items all have a source
  if (forwarded === null) refused.push({ position: item.position, verb: item.verb, index: target?.kind === 'signed' ? target.index : item.index, id: item.id, reason: (outcome as { reason: string }).reason });
  return forwarded;
}

/** How an item's source is signed (undefined: it is not): those for signed indices, and those whose index is undecided (to know whether they would be). */
function sourceKind(entry: BulkItem, target: Target | undefined): SourceKind | undefined {
  if (!entry.sourceLine || !target || target.kind === 'other') return undefined;
  return entry.verb === 'update' ? 'update' : entry.verb === 'delete' ? undefined : 'index';
}

/** Groups of entries, each signed on a thread, given back in order with a few groups in flight. */
async function* signedGroups(ctx: ProxyContext, entries: AsyncIterable<Entry>, request: BulkRequest): AsyncGenerator<SignedGroup> {
  const inFlight: Promise<SignedGroup>[] = [];
  const limit = ctx.pool.threads * 2;
  let group: Entry[] = [];
  let bytes = 0;
  const launch = (large: boolean) => {
    const signing = signGroup(ctx, group, large, request);
    signing.catch(() => {}); // awaited in order below
    inFlight.push(signing);
    group = [];
    bytes = 0;
  };
  for await (const entry of entries) {
    group.push(entry);
    const size = entry.kind === 'raw' ? entry.bytes.length : (entry.sourceLine?.length ?? 0);
    bytes += size;
    const large = size > LARGE_BYTES;
    if (large || group.length >= GROUP_ITEMS || bytes >= GROUP_BYTES) launch(large);
    // A large line is done with (signed, sent, answered) before the next is read: a bulk holds one at a time.
    if (large) while (inFlight.length > 0) yield await (inFlight.shift() as Promise<SignedGroup>);
    else if (inFlight.length >= limit) yield await (inFlight.shift() as Promise<SignedGroup>);
  }
  if (group.length > 0) launch(false);
  while (inFlight.length > 0) yield await (inFlight.shift() as Promise<SignedGroup>);
}

/**
 * Decides where a group's items go, then signs them. Each signed index gets the fields first (once in a
 * while, see IndexFieldsGuard): how it maps them decides how the signature is written, so the items are
 * signed in one batch per way (and per template set, proxy --template-share). Items whose index is undecided are signed as if it were signed, with
 * lists, only to learn whether they would be.
 */
async function signGroup(ctx: ProxyContext, entries: Entry[], large: boolean, request: BulkRequest): Promise<SignedGroup> {
  const targets = new Map<Entry, Target>();
  const decided = new Map<string, Promise<Target>>();
  // One batch per way of writing the fields and per signer (an index's template set): a batch is signed alike.
  const batches = new Map<string, { keyLists: KeyLists; options: SignerOptions; toSign: ToSign[] }>();
  for (const entry of entries) {
    if (entry.kind !== 'item' || entry.verb === 'delete' || entry.index === undefined) continue;
    const name = entry.index;
    let target = decided.get(name);
    if (!target) {
      target = ctx.targets.decide(name, request.headers, request.now);
      decided.set(name, target);
    }
    targets.set(entry, await target);
  }
  for (const entry of entries) {
    if (entry.kind !== 'item') continue;
    const target = targets.get(entry);
    const kind = sourceKind(entry, target);
    if (!kind || !target) continue;
    const signed = target.kind === 'signed';
    const keyLists = signed ? await ctx.fields.ensure(target.index, request.headers) : 'lists';
    const options = signed ? await ctx.templates.signerFor(target.index, request.headers) : ctx.signer;
    const key = `${keyLists} ${options.template?.digest ?? ''}`;
    const batch = batches.get(key) ?? { keyLists, options, toSign: [] };
    batch.toSign.push({ entry, kind });
    batches.set(key, batch);
  }
  const outcomes = new Map<Entry, SignedSource>();
  for (const { keyLists, options, toSign } of batches.values()) {
    const signed = await signBatch(ctx, toSign, keyLists, options);
    for (let i = 0; i < toSign.length; i++) outcomes.set(toSign[i].entry, signed[i]);
  }
  return { entries, large, outcomes, targets };
}

type ToSign = { entry: BulkItem; kind: SourceKind };

async function signBatch(ctx: ProxyContext, toSign: ToSign[], keyLists: KeyLists, options: SignerOptions): Promise<SignedSource[]> {
  const packed = new Uint8Array(toSign.reduce((sum, s) => sum + (s.entry.sourceLine as Uint8Array).length, 0));
  const ends: number[] = [];
  let at = 0;
  for (const { entry } of toSign) {
    packed.set(entry.sourceLine as Uint8Array, at);
    at += (entry.sourceLine as Uint8Array).length;
    ends.push(at);
  }
  const sources = { ...ctx.sources, keyLists };
  return ctx.pool.signSources({ options, sources, kinds: toSign.map((s) => s.kind), bytes: packed, ends }, [packed.buffer]);
}

/**
 * Writes the client's answer: the engine's own when possible, else the joined one. A first part refused as a
 * whole had nothing applied, so the engine's refusal is the answer, as without the proxy. A later one: the
 * parts before it were applied, so the client gets their items, and each item not applied answered with the
 * refusal's status and error (a 429 item is one the clients' bulk helpers send again, alone).
 */
async function answer(res: http.ServerResponse, answers: PartAnswer[], refused: RefusedItem[], filterPath: string | null): Promise<ItemStatuses> {
  const first = answers[0];
  if (answers.length === 1 && refused.length === 0 && filterPath === null) {
    const statuses = first.status >= 300 ? Promise.resolve<ItemStatuses>('none') : statusesOf(first.body);
    pipeAnswer(first, res);
    return statuses;
  }
  const bodies: BulkAnswer[] = [];
  for (const part of answers) {
    const text = (await readBody(part.body)).toString('utf8');
    if (part.status < 300) bodies.push(JSON.parse(text) as BulkAnswer);
    else if (part === first) {
      send(res, part.status, part.rawHeaders, text);
      return 'none';
    } else bodies.push(notAppliedAnswer(part.status, text, part.items));
  }
  // Joined, filtered and written a thousand items at a time, the event loop free for other clients between.
  const chunks = await bulkAnswerChunks(bodies, refused, filterPath);
  if (!res.destroyed) send(res, first?.status ?? 200, first?.rawHeaders ?? ['content-type', 'application/json; charset=UTF-8'], chunks);
  return bodies.flatMap((b) => (b.items ?? []).map(itemStatus));
}

/** Items counted as signed or cleared when sent (undefined: counted as something else). */
type Counted = 'signed' | 'cleared' | undefined;

/** The engine's status per item, in order; 'all': every item stored ("errors": false); 'none': the request was refused as a whole. */
type ItemStatuses = number[] | 'all' | 'none';

function itemStatus(item: Record<string, unknown>): number {
  const result = Object.values(item)[0] as { status?: unknown } | undefined;
  return typeof result?.status === 'number' ? result.status : 0;
}

/**
 * The item statuses of an answer that is piped to the client as it comes: read beside it, and parsed only
 * when the engine says some item failed (its answer starts with "errors": true).
 */
function statusesOf(body: Readable): Promise<ItemStatuses> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let head = '';
    let keep = true;
    body.on('data', (chunk: Buffer) => {
      if (!keep) return;
      chunks.push(chunk);
      if (head.length < 256) {
        head += chunk.toString('utf8', 0, Math.min(chunk.length, 256));
        if (/"errors"\s*:\s*false/.test(head)) {
          keep = false;
          chunks.length = 0;
          resolve('all');
        }
      }
    });
    body.once('end', () => {
      if (!keep) return;
      try {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BulkAnswer;
        resolve(parsed.errors === false ? 'all' : (parsed.items ?? []).map(itemStatus));
      } catch {
        resolve('all'); // not a bulk answer: nothing to correct
      }
    });
    body.once('error', () => resolve('all'));
  });
}

/** Items counted as signed (or cleared) that the engine did not store: counted as refused by it instead. */
function countNotStored(ctx: ProxyContext, counted: readonly Counted[], statuses: ItemStatuses): void {
  if (statuses === 'all') return;
  counted.forEach((kind, i) => {
    if (kind === undefined) return;
    const status = statuses === 'none' ? 0 : statuses[i];
    if (status === undefined || (status >= 200 && status < 300)) return;
    ctx.stats.notStored(kind);
  });
}

/** Writes an answer of one text or of pieces, one after the other (never joined into one copy). */
function send(res: http.ServerResponse, status: number, rawHeaders: readonly string[], text: string | readonly string[]): void {
  const pieces = typeof text === 'string' ? [text] : text;
  const length = pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
  res.writeHead(status, [...passableHeaders(rawHeaders, ['content-length', 'content-encoding']), 'content-length', String(length)]);
  for (const piece of pieces) res.write(piece);
  res.end();
}
