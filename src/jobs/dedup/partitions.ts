// The band keys held by two or more documents, found by the engine a partition at a time (a terms
// aggregation with include.partition), so that neither the engine's nor the client's memory grows with
// the index. How many partitions: each one reads the documents of its keys once, so fewer, fuller
// partitions read less; the first partition (the engine spreads keys over partitions by hash) tells how
// full they are. A partition too full is split in four where it stands, without starting over.

/** Band keys held by two or more documents, with their counts, as a terms aggregation gives them. */
export type PartitionKeys = Array<{ key: string; doc_count: number }>;

/**
 * The keys of partition `partition` of `count` held by at least `minDocCount` documents, or null when
 * the partition holds more keys than one answer carries (or than the engine's memory allows).
 */
export type KeysOfPartition = (partition: number, count: number, minDocCount: number) => Promise<PartitionKeys | null>;

export const MAX_PARTITIONS = 1 << 16;

export class TooManyKeysError extends Error {
  override name = 'TooManyKeysError';
}

/**
 * How many partitions of at most `perPartition` keys: a first guess from the number of distinct keys,
 * refined by the first partition (more when it overflows, fewer when it is far from full). Returns the
 * first partition's keys too, so they are not asked for twice.
 */
export async function planPartitions(keysOf: KeysOfPartition, distinctKeys: number, perPartition: number): Promise<{ partitions: number; first: PartitionKeys | null }> {
  let partitions = Math.max(1, Math.ceil(distinctKeys / (perPartition * 20)));
  let first = await keysOf(0, partitions, 2);
  while (first === null && partitions < MAX_PARTITIONS) first = await keysOf(0, (partitions *= 4), 2);
  if (first !== null && partitions > 1 && first.length < perPartition / 4) {
    const fewer = Math.max(1, Math.ceil((partitions * first.length) / (perPartition * 0.6)));
    const probe = await keysOf(0, fewer, 2);
    if (probe !== null) [partitions, first] = [fewer, probe];
  }
  return { partitions, first };
}

/**
 * Hands the keys of one partition (held by at least `minDocCount` documents) to `handle`. Partition p
 * of P is partitions p, p + P, p + 2P and p + 3P of 4P (the engine takes the key's hash modulo the
 * count): a partition too full is split where it stands. `fetched`: its keys, when already asked for.
 */
export async function eachPartition(
  keysOf: KeysOfPartition,
  partition: number,
  count: number,
  minDocCount: number,
  handle: (keys: PartitionKeys) => Promise<void> | void,
  fetched?: PartitionKeys | null,
): Promise<void> {
  const keys = fetched === undefined ? await keysOf(partition, count, minDocCount) : fetched;
  if (keys !== null) return handle(keys);
  if (count >= MAX_PARTITIONS) throw new TooManyKeysError(`the band keys do not fit ${MAX_PARTITIONS} partitions`);
  for (let k = 0; k < 4; k++) await eachPartition(keysOf, partition + k * count, count * 4, minDocCount, handle);
}
