// The template tokens the proxy signs an index's documents with (proxy --template-share S): the set the
// index keeps for the proxy's draw (its condenser, S, the sample asked), found once in a while and shared by
// every write to the index, so that what the proxy writes matches what annotate and ingest wrote there
// (same params, same tpl=). An index that keeps no such set is signed without one, and said once, with the
// command that draws one. The look-ups go with the client's own Authorization, as every request of the proxy.
// Only the engine's answers are kept (a set, or none): a look-up that fails (a client without credentials or
// privileges, a 429, a timeout) is kept by no one, and the write it was for is refused with the reason, never
// signed without the set (one such request would otherwise have every client's writes signed without it).
import type { HttpMethod } from '../engine/client.js';
import { engineAnswerOf } from '../engine/errors.js';
import { redactSecret } from '../engine/url.js';
import { findTemplate, isRefusal, refusedNote, TEMPLATE_INDEX, type TemplateAccess, type TemplateRequest, templateDraw } from '../indices/template-store.js';
import type { SignerOptions } from '../signature.js';
import { headerValue, type Upstream, upstreamJson } from './forward.js';
import { PROXY_ERROR, ProxyRefusal } from './refusal.js';

/** How long an index's set (or its having none) is taken as known before it is looked up again. */
const RECHECK_MS = 30_000;

/** The template tokens each index's documents are signed with, as the engine answered for it, kept a while. */
export class IndexTemplates {
  /** What the engine answered for an index (its set, or none), and when. */
  private readonly known = new Map<string, { at: number; signer: SignerOptions }>();
  /** Look-ups under way, by index and credentials: a client shares one only with requests that came with its own. */
  private readonly pending = new Map<string, Promise<SignerOptions>>();
  private readonly warned = new Set<string>();

  constructor(
    private readonly upstream: Upstream,
    private readonly signer: SignerOptions,
    private readonly asked: TemplateRequest | undefined,
    private readonly fields: readonly string[],
    private readonly warn: (line: string) => void,
  ) {}

  /**
   * The signer options for `index`'s documents: with the set it keeps for the proxy's draw, when it keeps one.
   * @throws {ProxyRefusal} the set could not be looked up: the engine's status (503 when it gave none) and why.
   */
  signerFor(index: string, clientHeaders: readonly string[]): Promise<SignerOptions> {
    if (!this.asked) return Promise.resolve(this.signer);
    const known = this.known.get(index);
    if (known && Date.now() - known.at < RECHECK_MS) return Promise.resolve(known.signer);
    const authorization = headerValue(clientHeaders, 'authorization');
    const key = JSON.stringify([index, authorization ?? null]);
    let signer = this.pending.get(key);
    if (!signer) {
      const at = Date.now();
      signer = this.look(index, this.asked, authorization).finally(() => this.pending.delete(key));
      signer.then((found) => this.known.set(index, { at, signer: found }), () => undefined);
      this.pending.set(key, signer);
    }
    return signer;
  }

  private async look(index: string, asked: TemplateRequest, authorization: string | undefined): Promise<SignerOptions> {
    const draw = templateDraw(this.signer, asked);
    let template: Awaited<ReturnType<typeof findTemplate>>;
    try {
      template = await findTemplate(templateAccess(this.upstream, authorization), index, draw);
    } catch (err) {
      if (asked.atLeast !== undefined && isRefusal(err)) return this.withoutSet(index, err as Error);
      const reason = `near-dup proxy could not read the template tokens of "${index}" (${redactSecret((err as Error).message, authorization)}), so it did not write the documents rather than sign them without; send them again (the clients need read on ${TEMPLATE_INDEX} and indices:admin/get, view_index_metadata, on the index)`;
      if (!this.warned.has(`failed ${index}`)) this.warn(reason);
      this.warned.add(`failed ${index}`);
      const status = statusOf(err);
      throw new ProxyRefusal(status, errorType(err) ?? PROXY_ERROR, reason, status === 429 || status === 503 ? 1 : undefined);
    }
    this.warned.delete(`failed ${index}`); // a later failure is said again
    if (template) return { ...this.signer, template };
    // The default draw: an index that keeps none (fewer than 2,000 documents when annotated) is the usual case.
    if (asked.atLeast === undefined && !this.warned.has(index)) {
      this.warned.add(index);
      this.warn(`index "${index}" keeps no template tokens for --template-share ${asked.share} (sample ${draw.sampleAsked}, condenser ${draw.condenser}): its documents are signed without; near-dup annotate --index ${index} --field ${this.fields.join(' --field ')} --template-share ${asked.share}${asked.sample === undefined ? '' : ` --template-sample ${asked.sample}`} --force draws one and signs the index again`);
    }
    return this.signer;
  }

  /**
   * The default draw, refused to this client (no read on near-dup-templates): its documents are signed
   * without a set, as annotate and ingest sign when the store refuses them, and said once per index.
   */
  private withoutSet(index: string, err: Error): SignerOptions {
    if (!this.warned.has(`refused ${index}`)) this.warn(`index "${index}": ${refusedNote(err)}`);
    this.warned.add(`refused ${index}`);
    return this.signer;
  }
}

/** The status a write is refused with when its set could not be looked up: the engine's error status, else 503. */
function statusOf(err: unknown): number {
  const status = engineAnswerOf(err)?.statusCode;
  return status !== undefined && status >= 400 && status < 600 ? status : 503;
}

function errorType(err: unknown): string | undefined {
  return engineAnswerOf(err)?.type;
}

/** The store's requests, sent upstream with the client's credentials. */
function templateAccess(upstream: Upstream, authorization: string | undefined): TemplateAccess {
  const headers = authorization ? ['authorization', authorization] : [];
  return { request: async <T>(method: HttpMethod, path: string, body?: unknown) => (await upstreamJson(upstream, method, path, body, headers)) as T };
}
