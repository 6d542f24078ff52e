// The template tokens the proxy signs an index's documents with (proxy --template-share S): the set the
// index keeps for the proxy's draw (its condenser, S, the sample asked), found once in a while and shared by
// every write to the index, so that what the proxy writes matches what annotate and ingest wrote there
// (same params, same tpl=). An index that keeps no such set is signed without one, and said once, with the
// command that draws one. The look-ups go with the client's own Authorization, as every request of the proxy.
import type { HttpMethod } from '../engine/client.js';
import { redactSecret } from '../engine/url.js';
import { findTemplate, TEMPLATE_INDEX, type TemplateAccess, type TemplateRequest, templateDraw } from '../indices/template-store.js';
import type { SignerOptions } from '../signature.js';
import { headerValue, type Upstream, upstreamJson } from './forward.js';

/** How long an index's set (or its having none) is taken as known before it is looked up again. */
const RECHECK_MS = 30_000;

export class IndexTemplates {
  private readonly known = new Map<string, { at: number; signer: Promise<SignerOptions> }>();
  private readonly warned = new Set<string>();

  constructor(
    private readonly upstream: Upstream,
    private readonly signer: SignerOptions,
    private readonly asked: TemplateRequest | undefined,
    private readonly fields: readonly string[],
    private readonly warn: (line: string) => void,
  ) {}

  /** The signer options for `index`'s documents: with the set it keeps for the proxy's draw, when it keeps one. Never rejects. */
  signerFor(index: string, clientHeaders: readonly string[]): Promise<SignerOptions> {
    if (!this.asked) return Promise.resolve(this.signer);
    const now = Date.now();
    const known = this.known.get(index);
    if (known && now - known.at < RECHECK_MS) return known.signer;
    const signer = this.look(index, this.asked, clientHeaders);
    this.known.set(index, { at: now, signer });
    return signer;
  }

  private async look(index: string, asked: TemplateRequest, clientHeaders: readonly string[]): Promise<SignerOptions> {
    const authorization = headerValue(clientHeaders, 'authorization');
    const draw = templateDraw(this.signer, asked);
    try {
      const template = await findTemplate(templateAccess(this.upstream, authorization), index, draw);
      if (template) return { ...this.signer, template };
      this.once(index, `index "${index}" keeps no template tokens for --template-share ${asked.share} (sample ${draw.sampleAsked}, condenser ${draw.condenser}): its documents are signed without; near-dup annotate --index ${index} --field ${this.fields.join(' --field ')} --template-share ${asked.share}${asked.sample === undefined ? '' : ` --template-sample ${asked.sample}`} --force draws one and signs the index again`);
    } catch (err) {
      this.once(index, `could not read the template tokens of "${index}" (${redactSecret((err as Error).message, authorization)}); its documents are signed without. Give the clients read on ${TEMPLATE_INDEX} and indices:admin/get (view_index_metadata) on the index`);
    }
    return this.signer;
  }

  private once(index: string, line: string): void {
    if (this.warned.has(index)) return;
    this.warned.add(index);
    this.warn(line);
  }
}

/** The store's requests, sent upstream with the client's credentials. */
function templateAccess(upstream: Upstream, authorization: string | undefined): TemplateAccess {
  const headers = authorization ? ['authorization', authorization] : [];
  return { request: async <T>(method: HttpMethod, path: string, body?: unknown) => (await upstreamJson(upstream, method, path, body, headers)) as T };
}
