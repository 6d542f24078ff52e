// The checking thread of BucketChecker (bucket-check.ts): a group's records read, every pair compared.
import { closeSync, openSync } from 'node:fs';
import { type BucketCheckTask, type CheckedBuckets, checkBuckets } from './bucket-check.js';
import { ascendingOnce, RecordReader } from '../scan/spill-records.js';

/** The reader of the last layout, its buffers kept from task to task. */
let reader: { key: string; reader: RecordReader } | undefined;

/**
 * The worker's task: the buckets' members read from the records file through a descriptor opened for the task and
 * closed after it (a descriptor kept open would keep the removed spill's disk space), then every pair checked.
 */
export default function checkTask(task: BucketCheckTask): CheckedBuckets {
  const key = JSON.stringify(task.layout);
  if (reader?.key !== key) reader = { key, reader: new RecordReader(task.layout) };
  const large = task.largeKeys.map((hashes) => new Set(hashes));
  const slots = ascendingOnce(Uint32Array.from(task.order));
  const fd = openSync(task.file, 'r');
  try {
    const signatureOf = reader.reader.read(fd, slots);
    return checkBuckets(task, signatureOf, (band) => large[band]);
  } finally {
    closeSync(fd);
  }
}
