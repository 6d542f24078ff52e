// Signing a text as an index's documents are signed (sign --for-index): the options its stored params say
// (similar's signerForIndex), with the template set their tpl= names loaded from where the index keeps it;
// or, asked for a template draw, the given options with the set the index keeps for that draw. A text
// signed so can be compared with the index's signatures, which without the set it could not be.
import { DEFAULT_PREFIX } from '../annotation.js';
import type { EngineClient } from '../engine/client.js';
import { UsageError } from '../errors.js';
import { findTemplate, loadTemplate, type TemplateRequest, templateDraw } from '../indices/template-store.js';
import type { SignerOptions } from '../signature.js';
import { signerForIndex } from './similar.js';

/** How a job that writes into an index chooses its signer: the options given, and the template draw asked for. */
export interface IndexSignerOptions {
  /** The signer options given (checked against the index's params when no template draw is asked for). */
  signer?: SignerOptions;
  /** The draw whose set to sign with (as annotate, ingest or the proxy were given it). */
  template?: TemplateRequest;
  /** The object the near-dup fields are under (default `near_dup`). */
  prefix?: string;
}

/**
 * The signer options that sign a text as `index`'s documents are signed, template set included.
 * @throws {UsageError} the index holds signatures of several params and none is asked for, the options
 *   given are not its params, or it keeps no set for the draw asked for: naming what to give.
 */
export async function indexSigner(client: EngineClient, index: string, options: IndexSignerOptions = {}): Promise<SignerOptions> {
  const { signer = {}, template, prefix = DEFAULT_PREFIX } = options;
  if (template) {
    const draw = templateDraw(signer, template);
    const kept = await findTemplate(client, index, draw);
    if (kept) return { ...signer, template: kept };
    throw new UsageError(
      `"${index}" keeps no template tokens for a template share of ${template.share} (sample ${draw.sampleAsked}, condenser ${draw.condenser}); leave the template options out to sign as its params say, or draw a set with near-dup annotate --index ${index} --template-share ${template.share} --force`,
    );
  }
  const held = (await signerForIndex(client, index, prefix, signer)) ?? {};
  return held.templateDigest === undefined ? held : { ...held, template: await loadTemplate(client, index, held.templateDigest) };
}
