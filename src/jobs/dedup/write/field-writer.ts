// Partial updates of near-dup fields, for the write-backs of dedup: one bulk writer, each failure
// counted and listed in the errors file, the fields put under the prefix, each update sent where its
// document lives (its own index behind an alias or data stream, its routing).
import { underPrefix } from '../../../annotation.js';
import type { EngineClient } from '../../../engine/client.js';
import { actionMeta, type DocLocation } from '../../../engine/doc-location.js';
import { InFlightLimit } from '../../../engine/in-flight.js';
import { planInFlight } from '../../../engine/in-flight-plan.js';
import { BulkWriter } from '../../bulk-writer.js';
import type { ErrorsFile } from '../../errors-file.js';

/** Where the updates go (the index and the prefix), how they are sent in bulk, and where progress is told. */
export interface FieldWriterSettings {
  index: string;
  prefix: string;
  bulk?: { maxBytes?: number; maxOperations?: number; concurrency?: number };
  /** After each update the engine acknowledged, with the count so far (progress). */
  onWritten?: (written: number) => void;
}

/** The write-back's one writer of partial updates: queues them, counts what was written and what failed. */
export interface FieldWriter {
  /**
   * Sets these fields (null clears one) under the prefix of document `id` at `location` (where a search
   * found it); waits when the queue is full.
   */
  update(id: string, location: DocLocation, fields: Record<string, unknown>): Promise<void>;
  /** Sends what is queued, then refreshes the index so that the engine's counts see it. */
  finish(): Promise<void>;
  readonly written: number;
  readonly failed: number;
  /** Bulk requests kept in flight, and what chose that number. */
  readonly inFlight: string;
}

/**
 * A writer of near-dup fields over one bulk writer, its requests in flight planned for the index, each failure counted
 * and listed in the errors file.
 */
export async function fieldWriter(client: EngineClient, errors: ErrorsFile, settings: FieldWriterSettings): Promise<FieldWriter> {
  const counts = { written: 0, failed: 0 };
  const inFlight = new InFlightLimit(await planInFlight(client, settings.index, settings.bulk?.concurrency));
  const writer = new BulkWriter({
    send: (ndjson) => client.bulkNdjson(ndjson),
    ...settings.bulk,
    inFlight,
    retries: client.retries,
    onSuccess: () => settings.onWritten?.(++counts.written),
    onFailure: (op, reason, status) => {
      counts.failed++;
      errors.add({ id: op.id, status, reason });
    },
  });
  return {
    update: (id, location, fields) => writer.add({ id, action: { update: actionMeta(id, location) }, body: { doc: underPrefix(settings.prefix, fields) } }),
    finish: async () => {
      await writer.flush();
      await client.refresh(settings.index);
    },
    get inFlight() {
      return inFlight.describe();
    },
    get written() {
      return counts.written;
    },
    get failed() {
      return counts.failed;
    },
  };
}
