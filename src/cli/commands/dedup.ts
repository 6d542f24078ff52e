// near-dup dedup: near-duplicate clusters of a whole index, written back for exploration.
import v8 from 'node:v8';
import type { CommandModule } from 'yargs';
import { prefixPath } from '../../indices/mapping.js';
import { UsageError, UserError } from '../../errors.js';
import {
  type CanonicalRule,
  type ClusterMethod,
  checkDedupOptions,
  checkShareOptions,
  DEDUP_DEFAULTS,
  type DedupCompare,
  type DedupOptions,
  type DedupShareOptions,
  type DedupStage,
  type DedupSummary,
  dedupIndex,
  dedupShare,
} from '../../jobs/dedup.js';
import { retriesNote } from './annotate.js';
import { olderLayoutNote } from '../../jobs/params-held.js';
import { type ConnectionArgs, connectFromArgs, withConnectionOptions } from '../connection-options.js';
import { writeOutputFile } from '../../jobs/file-writes.js';
import { createProgressPrinter } from '../progress.js';
import { escaped, escapeTerminal, jsonLine, terminalValue } from '../terminal-text.js';
import type { EngineClient } from '../../engine/client.js';
import { advanced, examples } from '../help.js';
import { forCount, plural } from '../../plural.js';

interface DedupArgs extends ConnectionArgs {
  resume: boolean;
  spillDir?: string;
  pageSize: number;
  index: string;
  prefix: string;
  minSimilarity: number;
  containment?: number;
  canonical?: string;
  clusters: ClusterMethod;
  dateField?: string;
  params?: string;
  pairs?: string;
  format: string;
  output?: string;
  dryRun: boolean;
  full: boolean;
  maxCachedSignatures: number;
  maxCachedMembers: number;
  maxFamilyLookups?: number;
  share?: string;
  fromShares?: number;
  pairsIndex?: string;
}

/**
 * How far V8 lets the heap grow past what a full collection left alive (30%, instead of its own factor of
 * up to 4). Reading a million signatures turns over gigabytes of parsed pages: with V8's own growth a dry
 * run of a million documents held 300 to 400 MB of dead pages beside the 640 MB of signatures (peak
 * 1,253 MB, 123 s); with this, 931 MB in 126 s (docs/benchmarks.md, bench:scale). Set for this process, the
 * CLI's; the library leaves its host's heap alone.
 */
const HEAP_GROWING_PERCENT = 30;

/** The progress line's unit for each stage of the job. */
const UNITS: Record<DedupStage, string> = { signatures: 'signatures', bands: 'bands', 'new documents': 'docs', verify: 'pairs', cut: 'families', 'write-back': 'docs', containment: 'lookups' };

/** `--canonical` read: oldest, newest, longest, or a field (`-field` for its highest value). */
export function parseCanonical(value: string | undefined): CanonicalRule | undefined {
  if (value === undefined) return undefined;
  if (value === 'oldest' || value === 'newest' || value === 'longest') return value;
  const m = /^(-?)([A-Za-z0-9_.@-]+)$/.exec(value);
  if (!m) throw new UsageError(`--canonical must be oldest, newest, longest, or a field name (-FIELD for the highest value), got "${value}"`);
  return { field: m[2], order: m[1] ? 'desc' : 'asc' };
}

/** `near-dup dedup`: every cluster of an annotated index, written back into it. */
export const dedupCommand: CommandModule<object, DedupArgs> = {
  command: 'dedup',
  describe: 'Find every near-duplicate cluster of an annotated index and write cluster fields back',
  builder: (yargs) =>
    withConnectionOptions(yargs)
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'annotated index' })
      .option('prefix', advanced({ type: 'string', default: DEDUP_DEFAULTS.prefix, describe: 'object the near-dup fields are under' }))
      .option('min-similarity', { type: 'number', default: DEDUP_DEFAULTS.minSimilarity, describe: 'estimated Jaccard a verified pair must reach' })
      .option('canonical', {
        type: 'string',
        describe: 'the document kept: oldest | newest (--date-field) | longest | FIELD (lowest) | -FIELD (highest) [default: oldest with --date-field, else longest]',
      })
      .option('clusters', {
        choices: ['centres', 'components'],
        default: DEDUP_DEFAULTS.clusters,
        describe: 'centres: each duplicate within --min-similarity of its canonical; components: whole families',
      })
      .option('date-field', advanced({ type: 'string', describe: 'date field for oldest/newest [default: <prefix>.annotated_at]' }))
      .option('containment', {
        type: 'number',
        describe: 'also mark partial copies: this share of their tokens inside a larger document (e.g. 0.8)',
      })
      .option('params', advanced({ type: 'string', describe: 'cluster only signatures made with these params (when the index holds several)' }))
      .option('pairs', advanced({ type: 'string', describe: 'write every verified pair with its similarity to this JSON-lines file' }))
      .option('format', { choices: ['json', 'text'], default: 'json', describe: 'json: a summary; text: a line per document "ID  # max 0.912 matches ID2, ID3"' })
      .option('output', { alias: 'o', type: 'string', describe: 'write the --format text lines to this file instead of stdout' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'find and report clusters, write nothing back' })
      .option('max-cached-signatures', advanced({
        type: 'number',
        default: DEDUP_DEFAULTS.maxCachedSignatures,
        describe: 'signatures held in memory (about 0.6 KB each); past this many documents they are spilled to local disk (about 0.75 KB each, removed at the end) and read back a bucket group at a time',
      }))
      .option('max-cached-members', advanced({
        type: 'number',
        default: DEDUP_DEFAULTS.maxCachedMembers,
        describe: 'documents with a near-duplicate whose clusters and best matches are held in memory once the signatures are spilled (about 30 bytes each, 12 more while they are written); past this many they are written to --spill-dir by document number (16 bytes a document of the index) and read back when met again, with the same clusters; the clusters are then cut from about this many members at a time',
      }))
      .option('spill-dir', advanced({ type: 'string', describe: 'where signatures are spilled past --max-cached-signatures (default: the system temporary folder; needs about 0.75 KB a document)' }))
      .option('full', { type: 'boolean', default: false, describe: 'redo the whole index (a re-run revisits only what was annotated since the last run)' })
      .option('max-family-lookups', advanced({
        type: 'number',
        describe: 'documents a re-run may look up to read the families it touches whole (default: a tenth of the index, 100 to 10,000); past that it runs in full',
      }))
      .option('resume', advanced({ type: 'boolean', default: false, describe: 'continue a full run that was killed or stopped, from its last finished band' }))
      .option('share', advanced({
        type: 'string',
        describe: 'K/N: find only share K of N of the buckets (by band-key hash) and write their pairs to --pairs-index; N processes, on any machines, split the work',
      }))
      .option('from-shares', advanced({
        type: 'number',
        describe: 'the final step of a split run: cluster from the pairs of N complete shares in --pairs-index and write back',
      }))
      .option('pairs-index', advanced({ type: 'string', describe: 'the index where shares write their pairs and progress (made by the first share)' }))
      .option('page-size', advanced({ type: 'number', default: DEDUP_DEFAULTS.pageSize, describe: 'documents per page of the scans that read cluster fields (the signatures are read at most 1,000 a page)' }))
      .epilogue(
        examples([
          ['near-dup dedup --index news --canonical oldest --date-field published', 'cluster and keep the first published'],
          ['near-dup dedup --index news --format text --pairs pairs.jsonl', 'list duplicates'],
          ['near-dup dedup --index crawl --clusters components', 'whole families of near-duplicates, chains included'],
          ['near-dup dedup --index crawl --share 2/3 --pairs-index crawl-pairs', 'one of 3 processes splitting the find; then --from-shares 3'],
        ]),
      ) as never,
  handler: async (argv) => {
    prefixPath(argv.prefix);
    const canonical = parseCanonical(argv.canonical);
    if (argv.share !== undefined) return runShare(argv, canonical);
    const progress = createProgressPrinter('dedup');
    const options: DedupOptions = {
      index: argv.index,
      compare: compareOptions(argv, canonical),
      limits: { spillDir: argv.spillDir, pageSize: argv.pageSize, maxCachedSignatures: argv.maxCachedSignatures, maxCachedMembers: argv.maxCachedMembers, maxFamilyLookups: argv.maxFamilyLookups },
      state: { full: argv.full, resume: argv.resume },
      output: { pairsFile: argv.pairs, collectMatches: argv.format === 'text', dryRun: argv.dryRun },
      fromShares: argv.fromShares,
      pairsIndex: argv.pairsIndex,
      onProgress: (p) =>
        progress.update({ stage: p.stage, seen: p.done, total: p.total, elapsedSeconds: p.elapsedSeconds, unit: UNITS[p.stage] }),
    };
    checkDedupOptions(options); // before connecting: a usage error is said first
    const client = await connectFromArgs(argv);
    const layout = await olderLayoutNote(client, argv.index, argv.prefix);
    if (layout) process.stderr.write(escaped`near-dup: ${layout}\n`);
    v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    try {
      const summary = await dedupIndex(client, options);
      progress.done();
      for (const note of summary.notes) process.stderr.write(escaped`near-dup: ${note}\n`);
      const { matches, ...rest } = summary;
      const held = summary.mode === 'incremental' ? await clustersHeld(client, argv.index, argv.prefix) : undefined;
      process.stderr.write(escapeTerminal(summaryLine(summary, held)) + '\n');
      if (argv.format === 'text') {
        // Ids escaped (terminal-text.ts), in the file as on the terminal: one line per document whatever its id holds.
        const lines = [...(matches ?? new Map<string, Array<{ id: string; jaccard: number }>>()).entries()]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([id, list]) => `${terminalValue(id)}  # max ${list[0].jaccard.toFixed(3)} matches ${list.map((m) => terminalValue(m.id)).join(', ')}`);
        const text = lines.join('\n') + (lines.length ? '\n' : '');
        if (argv.output) await writeOutput(argv.output, text);
        else process.stdout.write(text);
      } else {
        process.stdout.write(jsonLine(rest));
      }
      if (summary.failed > 0 || (!summary.dryRun && !summary.complete)) process.exitCode = 1;
    } finally {
      await client.close();
    }
  },
};

/** `; text`, or nothing without a text: a clause of the summary line (the form of retriesNote's). */
function clause(text: string | false | undefined): string {
  return text ? `; ${text}` : '';
}

/** The line said on stderr after a run: what was found, what was written, then what else there is to know, clause by clause. */
function summaryLine(s: DedupSummary, held: Held | undefined): string {
  const listed = s.errorsFile ? ` (listed in ${s.errorsFile})` : '';
  const damaged = clause(s.damaged > 0 && `${plural(s.damaged, 'document')} with a damaged stored signature left out${listed}`);
  if (s.mode === 'incremental' && (s.newDocuments ?? 0) === 0) return `${incrementalNote(0, held, s.documents)}${damaged}`;
  const since = s.mode === 'incremental' ? incrementalNote(s.newDocuments ?? 0, held, s.documents) : '';
  const found = `${plural(s.clusters, 'cluster')} holding ${plural(s.duplicates, 'duplicate')} among ${plural(s.documents, 'document')}`;
  const least = s.canonicalSimilarity.min === null ? '' : ` (every duplicate's similarity to its canonical at least ${s.canonicalSimilarity.min.toFixed(3)})`;
  const cut = s.clusterMethod === 'centres' ? `, cut from ${plural(s.families, 'family')}${least}` : ' (whole families)';
  const pairs = `(${s.verifiedPairs} of ${s.candidatePairs} candidate pairs verified; largest cluster ${s.largestCluster}) in ${s.seconds.toFixed(1)} s`;
  const written = s.dryRun ? ' (dry run: nothing written)' : clause(`${plural(s.written, 'document')} updated, ${s.cleared} cleared`);
  const alone = clause(s.alone > 0 && `${plural(s.alone, 'document')} whose near-duplicates all went to other canonicals ${forCount(s.alone, 'is a canonical of its own', 'are canonicals of their own')} (cluster_size 1)`);
  const c = s.containment;
  const contained = clause(c !== undefined && `${plural(c.contained, 'document')} at least ${c.minContainment} inside a larger one (${c.lookups} looked up in ${c.seconds.toFixed(1)} s)`);
  const resumed = clause(s.resumedPartitions > 0 && `resumed after ${plural(s.resumedPartitions, 'band')}`);
  const f = s.fromShares;
  const shared = clause(f !== undefined && `from the ${plural(f.pairs, 'pair')} of ${plural(f.shares, 'share')} in ${f.pairsIndex}${f.duplicates ? ` (${f.duplicates} found by two shares, kept once)` : ''}`);
  const incomplete = clause(!s.dryRun && !s.complete && `INCOMPLETE: ${plural(s.failed, 'write')} failed${listed}; run dedup again`);
  return `${since}${found}${cut} ${pairs}${written}${alone}${contained}${resumed}${retriesNote(s)}${shared}${damaged}${incomplete}`;
}

/** What is compared, as the command line gives it (a share and the final step alike). */
function compareOptions(argv: DedupArgs, canonical: CanonicalRule | undefined): DedupCompare {
  const { prefix, minSimilarity, containment, clusters, dateField, params } = argv;
  return { prefix, minSimilarity, containment, canonical, clusters, dateField, params };
}

/** One share of a split run (--share K/N): its pairs written to --pairs-index, a line saying what, the summary as JSON. */
async function runShare(argv: DedupArgs, canonical: CanonicalRule | undefined): Promise<void> {
  const progress = createProgressPrinter('dedup share');
  const options: DedupShareOptions = {
    index: argv.index,
    compare: compareOptions(argv, canonical),
    limits: { spillDir: argv.spillDir, pageSize: argv.pageSize, maxCachedSignatures: argv.maxCachedSignatures },
    state: { resume: argv.resume },
    output: { pairsFile: argv.pairs, collectMatches: argv.format === 'text', dryRun: argv.dryRun },
    share: argv.share as string,
    pairsIndex: argv.pairsIndex as string,
    onProgress: (p) => progress.update({ stage: p.stage, seen: p.done, total: p.total, elapsedSeconds: p.elapsedSeconds, unit: UNITS[p.stage] }),
  };
  checkShareOptions({ ...options, fromShares: argv.fromShares } as DedupShareOptions); // before connecting: a usage error is said first
  const client = await connectFromArgs(argv);
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  try {
    const summary = await dedupShare(client, options);
    progress.done();
    for (const note of summary.notes) process.stderr.write(escaped`near-dup: ${note}\n`);
    const what = summary.alreadyComplete
      ? `share ${summary.share} was complete already: ${plural(summary.pairs, 'pair')} in ${plural(summary.pages, 'document')} of ${summary.pairsIndex} (checked); nothing to do`
      : `share ${summary.share}: ${summary.verifiedPairs} of ${summary.candidatePairs} candidate pairs verified in its ${plural(summary.buckets, 'bucket')} of ${plural(summary.bands, 'band')} among ${plural(summary.documents, 'document')}, ` +
        `${plural(summary.pairs, 'pair')} written to ${summary.pairsIndex} in ${summary.seconds.toFixed(1)} s` +
        `${summary.resumedBands ? `; went on after the ${plural(summary.resumedBands, 'band')} an earlier attempt had done` : ''}` +
        `${summary.restarted ? `; started over: ${summary.restarted}` : ''}${retriesNote(summary)}`;
    const damage = summary.damaged ? `; ${plural(summary.damaged, 'document')} with a damaged stored signature left out${summary.errorsFile ? ` (listed in ${summary.errorsFile})` : ''}` : '';
    process.stderr.write(escapeTerminal(`${what}${damage}. When every share is complete: ${summary.next}`) + '\n');
    process.stdout.write(jsonLine(summary));
  } finally {
    await client.close();
  }
}

/** What the index holds from earlier runs: clusters (their canonicals) and duplicates. */
interface Held {
  clusters: number;
  duplicates: number;
}

/** What the index holds from earlier runs; undefined when it cannot be counted. */
async function clustersHeld(client: EngineClient, index: string, prefix: string): Promise<Held | undefined> {
  const field = (name: string) => `${prefix}.${name}`;
  try {
    const [clusters, duplicates] = await Promise.all([
      client.count(index, { bool: { filter: [{ term: { [field('is_canonical')]: true } }, { range: { [field('cluster_size')]: { gte: 2 } } }] } }),
      client.count(index, { bool: { filter: [{ exists: { field: field('cluster_id') } }, { term: { [field('is_canonical')]: false } }] } }),
    ]);
    return { clusters, duplicates };
  } catch {
    return undefined;
  }
}

/**
 * The start of an incremental run's summary: its counts are those of the documents new since the last run,
 * not of the index; said so, with what the index already holds and how to recompute it all.
 */
export function incrementalNote(newDocuments: number, held: Held | undefined, documents: number): string {
  const holds = held
    ? `the index already holds ${plural(held.clusters, 'cluster')} with ${plural(held.duplicates, 'duplicate')} among its ${documents} signed documents, from earlier runs`
    : 'the clusters of earlier runs stay as they are';
  if (newDocuments === 0) return `incremental run: nothing annotated since the last run, nothing to do: ${holds}; near-dup dedup --full recomputes them all`;
  return `incremental run over the ${plural(newDocuments, 'document')} annotated since the last run (${holds}; --full recomputes them all): `;
}

/** --output: replaced whole through a temporary file (a symbolic link there is replaced, not followed: file-writes.ts). */
async function writeOutput(file: string, text: string): Promise<void> {
  try {
    await writeOutputFile(file, text);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new UserError(`cannot write --output ${file}: ${e.code === 'ENOENT' ? 'no such folder' : e.code === 'EISDIR' ? 'it is a folder' : e.code === 'EACCES' ? 'permission denied' : e.message}`);
  }
}
