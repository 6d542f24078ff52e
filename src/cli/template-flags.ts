// --template-share and --template-sample as annotate, ingest and the proxy take them: neither given is the
// jobs' default request (DEFAULT_TEMPLATE_REQUEST: drawn when there are 2,000 documents or more), a share of
// 0 is none, a share above 0 is drawn from whatever the sample holds, as asked.
import { UsageError } from '../errors.js';
import { DEFAULT_TEMPLATE_REQUEST, type TemplateRequest } from '../indices/template-store.js';

/**
 * The template request that `--template-share` and `--template-sample` ask for (the file header says how), or a usage
 * line for a pair that contradicts itself.
 */
export function templateRequestOf(argv: { templateShare?: number; templateSample?: number }): { template?: TemplateRequest | false } {
  const { templateShare: share, templateSample: sample } = argv;
  if (share === 0) {
    if (sample !== undefined) throw new UsageError('--template-sample goes with a --template-share above 0: --template-share 0 signs without template tokens');
    return { template: false };
  }
  if (share === undefined) return sample === undefined ? {} : { template: { ...DEFAULT_TEMPLATE_REQUEST, sample } };
  return { template: { share, ...(sample === undefined ? {} : { sample }) } };
}
