// The template tokens annotate signs an index with (annotate --template-share): the set the index keeps
// for this condenser, share and sample size when it has one, so that every run, resumed or not, and every
// slice signs with the same set; else one drawn from the first documents of a scan of the job's query
// (the whole of it, never a slice, so that the slices draw the same set) and kept with the index
// (indices/template-store.ts).
import { extractText } from '../annotation.js';
import type { EngineClient } from '../engine/client.js';
import { scanIndex } from '../engine/scan.js';
import { findTemplate, storeTemplate } from '../indices/template-store.js';
import { createSigner, resolveSignerSettings, type SignerOptions } from '../signature.js';
import { DEFAULT_TEMPLATE_MIN_COUNT, type TemplateTokens, TemplateSampler } from '../sketch/template-tokens.js';

/** Documents a template is drawn from, by default. */
export const DEFAULT_TEMPLATE_SAMPLE = 10_000;

export interface TemplateRequest {
  /** A token in more than this share of the sampled documents is left out of the MinHash (0.05 is usual). */
  share: number;
  /** How many documents (the first of the scan) the set is drawn from (default 10,000). */
  sample?: number;
}

export interface TemplateSource {
  index: string;
  fields: readonly string[];
  query?: Record<string, unknown>;
  maxChars: number;
  /** The signer options the template is for (their condenser makes the tokens). */
  signer: SignerOptions;
  /** Draw, but keep nothing in the mapping (a dry run). */
  dryRun: boolean;
}

/** The template set for a job: the one the index keeps for the same draw, or a new one, kept unless in a dry run. */
export async function templateForJob(client: EngineClient, source: TemplateSource, asked: TemplateRequest): Promise<TemplateTokens> {
  const sampleAsked = asked.sample ?? DEFAULT_TEMPLATE_SAMPLE;
  const { condenser } = resolveSignerSettings({ ...source.signer, template: undefined, templateDigest: undefined });
  const draw = { condenser, sampleAsked, share: asked.share, minCount: DEFAULT_TEMPLATE_MIN_COUNT };
  const kept = await findTemplate(client, source.index, draw);
  if (kept) return kept;
  const template = await drawTemplate(client, source, draw);
  // Another run may have kept its draw first: that one is signed with, by every run.
  return source.dryRun ? template : await storeTemplate(client, source.index, template, draw);
}

async function drawTemplate(client: EngineClient, source: TemplateSource, draw: { sampleAsked: number; share: number; minCount: number }): Promise<TemplateTokens> {
  const sampler = new TemplateSampler(draw.share, draw.minCount);
  const sign = createSigner({ ...source.signer, template: undefined, templateDigest: undefined });
  const pages = scanIndex(client, {
    index: source.index,
    query: source.query,
    sourceIncludes: [...source.fields],
    pageSize: Math.min(1000, draw.sampleAsked),
    pointInTime: client.pointInTime,
  });
  for await (const page of pages) {
    for (const hit of page) {
      if (sampler.documents >= draw.sampleAsked) break;
      try {
        const hashes = sign.tokenHashes(extractText(hit._source ?? {}, source.fields, source.maxChars).text);
        if (hashes.length > 0) sampler.add(hashes);
      } catch {
        // A document whose fields hold no text, or text of no token, is left out of the sample; annotate names the first when it signs.
      }
    }
    if (sampler.documents >= draw.sampleAsked) break;
  }
  return sampler.result();
}
