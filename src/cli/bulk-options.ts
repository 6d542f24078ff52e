// The bulk writing options of the commands that write (annotate, ingest). Apart from the signing options:
// their defaults come with the bulk writer (p-queue, the engine's errors), which signing alone never loads.
import type { Argv } from 'yargs';
import { BULK_DEFAULTS } from '../jobs/bulk-writer.js';
import { advanced } from './help.js';

/** Bulk writing options shared by the commands that write (annotate, ingest). */
export function withBulkOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('bulk-size', advanced({ type: 'number', default: BULK_DEFAULTS.maxOperations, describe: 'operations per bulk request', group: 'Writing:' }))
    .option('bulk-bytes', advanced({ type: 'number', default: BULK_DEFAULTS.maxBytes, describe: 'bytes per bulk request', group: 'Writing:' }))
    .option(
      'concurrency',
      advanced({
        type: 'number',
        describe: 'bulk requests in flight, fixed [default: from the data nodes and shards, lowered on 429s]',
        group: 'Writing:',
      }),
    );
}

/** The bulk writing options as yargs parses them. */
export interface BulkArgs {
  bulkSize: number;
  bulkBytes: number;
  concurrency?: number;
}

/** The bulk options as the jobs take them (the jobs check them). */
export function bulkOptionsFrom(argv: BulkArgs): { maxOperations: number; maxBytes: number; concurrency?: number } {
  return { maxOperations: argv.bulkSize, maxBytes: argv.bulkBytes, concurrency: argv.concurrency };
}
