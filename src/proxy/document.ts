// One document through the proxy: PUT/POST /{index}/_doc[/{id}], /{index}/_create/{id} and POST
// /{index}/_update/{id}. The body is read whole (one document must be, to be signed), signed on a thread and
// sent on; the engine's answer comes back as it is. A document that cannot be signed is answered with the
// engine's kind of error (400 and a reason naming the field), or sent on unsigned with --on-error pass.
// A document whose index is undecided (targets.ts; only under --on-error reject) goes on when it would not
// be signed anyway (a script, an update that leaves the text alone), and is refused with the reason
// otherwise.
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { ClientGoneError, onClientGone, passableHeaders, pipeAnswer, readBody } from './forward.js';
import type { SignedSource, SourceKind } from '../signing/sign-sources.js';
import type { KeyLists } from '../stored/write.js';
import { REFUSAL_TYPE } from './bulk-response.js';
import { plainLength } from './request-body.js';
import { forwardedBody, type ProxyContext, sendError } from './context.js';
import type { Target } from './targets.js';

/** `target`: a signed index or an undecided one; `forwardTarget`: the path and query to send to (date math resolved). */
export async function handleDocument(ctx: ProxyContext, req: http.IncomingMessage, body: Readable, res: http.ServerResponse, target: Target, kind: SourceKind, forwardTarget: string): Promise<void> {
  const started = performance.now();
  ctx.stats.requests.document++;
  onClientGone(res, () => body.destroy(new ClientGoneError()));
  const original = await readBody(body, Number.POSITIVE_INFINITY, plainLength(req)).catch((err: Error) => {
    throw Object.assign(err, { appliedItems: 0 }); // nothing was sent: the answer says so
  });
  let forwarded: Uint8Array | null;
  let counted: 'signed' | 'cleared' | undefined;
  if (target.kind === 'undecided') {
    const outcome = await signOne(ctx, original, kind, 'lists');
    forwarded = outcome.outcome === 'untouched' && outcome.source === undefined ? original : null;
    if (forwarded === null) {
      ctx.stats.documents.rejected++;
      sendError(res, 400, REFUSAL_TYPE, target.reason);
      return;
    }
    ctx.stats.documents.untouched++;
  } else {
    // The index gets the fields first: how it maps them decides how the signature is written.
    const keyLists = await ctx.fields.ensure(target.index, req.rawHeaders);
    const outcome = await signOne(ctx, original, kind, keyLists, await ctx.templates.signerFor(target.index, req.rawHeaders));
    forwarded = forwardedBody(ctx, outcome, original);
    if (outcome.outcome === 'signed' || outcome.outcome === 'cleared') counted = outcome.outcome;
    if (forwarded === null) {
      sendError(res, 400, REFUSAL_TYPE, `near-dup could not sign the document: ${(outcome as { reason: string }).reason}`);
      return;
    }
  }
  const headers = passableHeaders(req.rawHeaders, ['content-length', 'content-encoding']);
  const waitStart = performance.now();
  const { request, response } = ctx.upstream.send(req.method ?? 'PUT', forwardTarget, headers, forwarded);
  onClientGone(res, () => request.destroy());
  ctx.stats.addLatency(waitStart - started);
  const answer = await response;
  // Counted as signed when sent: the engine's refusal (a missing privilege, a conflict) takes it back.
  if (counted && answer.status >= 300) ctx.stats.notStored(counted);
  pipeAnswer(answer, res);
}

async function signOne(ctx: ProxyContext, bytes: Uint8Array, kind: SourceKind, keyLists: KeyLists, options = ctx.signer): Promise<SignedSource> {
  const copy = new Uint8Array(bytes); // the original is sent on if nothing changes
  const sources = { ...ctx.sources, keyLists };
  const [outcome] = await ctx.pool.signSources({ options, sources, kinds: [kind], bytes: copy, ends: [copy.length] }, [copy.buffer]);
  return outcome;
}

