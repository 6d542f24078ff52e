// The commands evaluate prints to apply its recommendation: dedup's --min-similarity first; then annotate
// with flags that, parsed as the command line parses them, sign with the index's settings and the
// recommended bands, and nothing else changed.
import { expect, it } from 'vitest';
import { nextCommands } from '../../src/jobs/evaluate/next-commands.js';
import type { Recommendation } from '../../src/jobs/evaluate/quality.js';
import { resolveSignerSettings, type SignerOptions } from '../../src/signature.js';

const recommendation = (threshold: number, falseNegativeWeight: number, signed: SignerOptions = {}): Recommendation => {
  const { b, r } = resolveSignerSettings({ ...signed, threshold, falseNegativeWeight }).lsh;
  return { threshold, falseNegativeWeight, bands: b, rows: r, expectedRecall: 1, expectedFalseCandidates: 0, why: '', alternatives: [] };
};

/** The signer options a command's flags give (the flags evaluate can print). */
function optionsOf(command: string): SignerOptions {
  const words = command.split(' ');
  const value = (flag: string) => (words.includes(flag) ? words[words.indexOf(flag) + 1] : undefined);
  const num = (flag: string) => (value(flag) === undefined ? undefined : Number(value(flag)));
  return {
    preset: value('--preset'),
    condenser: value('--condenser'),
    seed: num('--seed'),
    scheme: value('--scheme') as SignerOptions['scheme'],
    threshold: num('--threshold'),
    falseNegativeWeight: num('--false-negative-weight'),
    simhashBlocks: num('--simhash-blocks'),
    containmentSample: num('--containment-sample'),
    keyEncoding: num('--key-encoding') as SignerOptions['keyEncoding'],
  };
}

it('dedup first, then annotate with the index settings and the recommended bands', () => {
  for (const signed of [{}, { condenser: '3-grams:norm:sha1:256', seed: 7, containmentSample: 0, simhashBlocks: 6 }] as SignerOptions[]) {
    const params = resolveSignerSettings(signed).params;
    const r = recommendation(0.9, 0.75, signed);
    const commands = nextCommands({ index: 'docs', fields: ['title', 'body'], prefix: 'near_dup', maxChars: 10_000_000, params }, r);
    expect(commands.dedup).toBe('near-dup dedup --index docs --min-similarity 0.9');
    expect(commands.annotate).toMatch(/^near-dup annotate --index docs --field title --field body .*--threshold 0\.9 --false-negative-weight 0\.75$/);
    const resigned = resolveSignerSettings(optionsOf(commands.annotate!)).params;
    expect(resigned).toBe(params.replace(/;b=\d+;r=\d+;/, `;b=${r.bands};r=${r.rows};`));
  }
});

it('no annotate when the index has the recommended bands already; --prefix and --max-chars kept', () => {
  const params = resolveSignerSettings({ threshold: 0.8 }).params;
  const lastDedup = { order: JSON.stringify({ canonical: 'longest', sortField: 'nd.token_count' }), clusters: 'centres' as const };
  const commands = nextCommands({ index: 'my docs', fields: ['body'], prefix: 'nd', maxChars: 5000, params, lastDedup }, recommendation(0.8, 0.75));
  expect(commands).toEqual({ dedup: "near-dup dedup --index 'my docs' --min-similarity 0.8 --prefix nd --canonical longest" });
  const other = nextCommands({ index: 'docs', fields: ['body'], prefix: 'nd', maxChars: 5000, params }, recommendation(0.6, 0.5));
  expect(other.annotate).toBe('near-dup annotate --index docs --field body --prefix nd --max-chars 5000 --threshold 0.6 --false-negative-weight 0.5');
});

it('an index signed with template tokens: annotate is given the draw the template store keeps, so that it signs with the same set', () => {
  const params = `${resolveSignerSettings({}).params};core=0123456789ab`;
  const at = (templateDraw: { share: number; sampleAsked?: number }) => nextCommands({ index: 'docs', fields: ['body'], prefix: 'near_dup', maxChars: 10_000_000, params, templateDraw }, recommendation(0.9, 0.75));
  expect(at({ share: 0.005, sampleAsked: 10_000 }).annotate).toMatch(/ --template-share 0\.005 --threshold 0\.9 /);
  expect(at({ share: 0.005, sampleAsked: 10_000 }).note ?? '').not.toMatch(/template/);
  expect(at({ share: 0.05, sampleAsked: 2000 }).annotate).toMatch(/ --template-share 0\.05 --template-sample 2000 /);
  expect(at({ share: 0.05 }).note).toMatch(/does not say how many documents the template tokens 0123456789ab were drawn from: give annotate the --template-sample/);
});

it("dedup keeps the last run's --canonical, --date-field and --clusters; a value that starts with a dash is one word", () => {
  const params = resolveSignerSettings({ threshold: 0.8 }).params;
  const dedupAfter = (order: unknown, clusters?: 'centres' | 'components') => nextCommands({ index: 'docs', fields: ['-body'], prefix: 'near_dup', maxChars: 10_000_000, params, lastDedup: { order: typeof order === 'string' ? order : JSON.stringify(order), clusters } }, recommendation(0.7, 0.5));
  expect(dedupAfter({ canonical: 'oldest', sortField: 'published' }).dedup).toBe('near-dup dedup --index docs --min-similarity 0.7 --canonical oldest --date-field published');
  expect(dedupAfter({ canonical: 'newest', sortField: 'near_dup.annotated_at' }, 'components').dedup).toBe('near-dup dedup --index docs --min-similarity 0.7 --canonical newest --clusters components');
  expect(dedupAfter({ canonical: { field: 'rank', order: 'desc' }, sortField: 'rank' }).dedup).toBe('near-dup dedup --index docs --min-similarity 0.7 --canonical=-rank');
  expect(dedupAfter({ canonical: 'oldest', sortField: 'published' }).annotate).toMatch(/^near-dup annotate --index docs --field=-body /);
  // A state that is damaged or edited is not taken: the note asks for the flags instead.
  for (const damaged of ['{not json', { canonical: 'biggest' }, { canonical: { field: '', order: 'desc' } }, null]) {
    const { dedup, note } = dedupAfter(damaged);
    expect(dedup).toBe('near-dup dedup --index docs --min-similarity 0.7');
    expect(note).toMatch(/give dedup the --canonical \(and --date-field, --clusters\) of the run evaluated/);
  }
});

it('an index signed with template tokens: the note names the set by its params key and asks for --template-share again', () => {
  const base = resolveSignerSettings({ condenser: 'white-space-4-grams' }).params;
  for (const [key, mode] of [['core', 'the default'], ['tpl', 'narrow']] as const) {
    const params = `${base};${key}=0123456789ab`;
    const { note } = nextCommands({ index: 'docs', fields: ['body'], prefix: 'near_dup', maxChars: 10_000_000, params }, recommendation(0.9, 0.75));
    expect(note, mode).toContain(`the index was signed with the template tokens 0123456789ab (params ${key}=0123456789ab), and the template store does not say how they were drawn: give annotate the same --template-share (and --template-sample) again`);
  }
});
