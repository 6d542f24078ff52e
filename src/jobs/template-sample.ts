// The template tokens annotate signs an index with (annotate --template-share): the set the index keeps
// for this condenser, share and sample size when it has one, so that every run, resumed or not, and every
// slice signs with the same set; else one drawn from the first documents of a scan of the job's query
// (the whole of it, never a slice, so that the slices draw the same set) and kept with the index
// (indices/template-store.ts).
import { extractText, parseDocumentLine } from '../annotation.js';
import type { EngineClient } from '../engine/client.js';
import { scanIndex } from '../engine/scan.js';
import { findTemplate, signedWithoutOn, storeTemplate, type TemplateRequest, templateDraw, tooFewNote } from '../indices/template-store.js';
import { createSigner, type SignerOptions } from '../signature.js';
import { type TemplateTokens, TemplateSampler } from '../sketch/template-tokens.js';
import type { LineBatch } from '../signing/line-batches.js';
import { utf8Lines } from '../text/decode.js';

export { DEFAULT_TEMPLATE_REQUEST, DEFAULT_TEMPLATE_SAMPLE, type TemplateRequest, templateDraw, tooFewNote } from '../indices/template-store.js';

/** Where a template sample is drawn from in an index: its fields, its query, and how much of each text. */
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

/** The set a job signs with, or none and why (a default request on a small index, or one the store refuses). */
export interface TemplateChoice {
  template?: TemplateTokens;
  note?: string;
}

/**
 * The template set for a job: the one the index keeps for the same draw, or a new one, kept unless in a dry
 * run; none when a default request finds too few documents or is refused (TemplateRequest.atLeast).
 */
export async function templateForJob(client: EngineClient, source: TemplateSource, asked: TemplateRequest): Promise<TemplateChoice> {
  try {
    const draw = templateDraw(source.signer, asked);
    const kept = await findTemplate(client, source.index, draw);
    if (kept || asked.keptOnly) return kept ? { template: kept } : {};
    const template = await drawTemplate(client, source, draw);
    if (asked.atLeast !== undefined && template.sample < asked.atLeast) return { note: tooFewNote(source.index, template.sample, asked) };
    // Another run may have kept its draw first: that one is signed with, by every run.
    return { template: source.dryRun ? template : await storeTemplate(client, source.index, template, draw) };
  } catch (err) {
    return { note: signedWithoutOn(err, asked) };
  }
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

/** Bytes of NDJSON held in memory while a sample is drawn from a stream that cannot be read twice (standard input). */
export const MAX_HELD_SAMPLE_BYTES = 256 * 1024 * 1024;

/** How a template sample is drawn from NDJSON lines (ingest's input), and how much of a stream read once to keep. */
export interface LineSampleOptions {
  fields: readonly string[];
  maxChars: number;
  signer: SignerOptions;
  draw: { sampleAsked: number; share: number; minCount: number };
  /** Keep the batches read (a stream read once), up to this many bytes; undefined: keep none (a file, read again). */
  holdBytes?: number;
}

/** A set drawn from the first documents of NDJSON batches, and the batches read for it when they are kept. */
export interface LineSample {
  template: TemplateTokens;
  /** The batches read, in order (only when kept): they are ingested before the rest of the stream. */
  held: LineBatch[];
  /** The sample stopped short of the documents asked for, as the batches held filled `holdBytes`. */
  cutShort: boolean;
}

/**
 * Draws a set from the first `draw.sampleAsked` documents of `batches` (lines that are not documents, or
 * hold no text of a token, left out as annotate leaves them out), reading no further than that.
 */
export async function drawFromLines(batches: AsyncIterator<LineBatch>, options: LineSampleOptions): Promise<LineSample> {
  const sampler = new TemplateSampler(options.draw.share, options.draw.minCount);
  const sign = createSigner({ ...options.signer, template: undefined, templateDigest: undefined });
  const held: LineBatch[] = [];
  let heldBytes = 0;
  let cutShort = false;
  while (sampler.documents < options.draw.sampleAsked) {
    const next = await batches.next();
    if (next.done) break;
    if (options.holdBytes !== undefined) {
      held.push(next.value);
      heldBytes += next.value.bytes.length;
    }
    for (const line of utf8Lines(next.value.bytes)) {
      if (sampler.documents >= options.draw.sampleAsked) break;
      const hashes = typeof line === 'string' ? lineTokens(line, sign, options) : undefined;
      if (hashes && hashes.length > 0) sampler.add(hashes);
    }
    if (options.holdBytes !== undefined && heldBytes >= options.holdBytes && sampler.documents < options.draw.sampleAsked) {
      cutShort = true;
      break;
    }
  }
  return { template: sampler.result(), held, cutShort };
}

function lineTokens(line: string, sign: ReturnType<typeof createSigner>, options: LineSampleOptions): Uint32Array | undefined {
  if (line.trim() === '') return undefined;
  try {
    return sign.tokenHashes(extractText(parseDocumentLine(line), options.fields, options.maxChars).text);
  } catch {
    return undefined; // not a document, or no text: the signing names it when it comes to it
  }
}
