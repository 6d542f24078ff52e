// What state the indices behind a name are in, asked before a job writes: blocks (a disk that passed the
// flood-stage watermark makes indices read-only; an operator can block writes), and closed indices that a
// pattern matches but a search passes over without a word. Each gets a named answer, not "overloaded".
import { UserError } from '../errors.js';
import type { HttpMethod } from '../engine/client.js';
import { describeBlock } from '../engine/errors.js';
import { type PrivilegeProbeAccess, requireWritePrivileges, type WriteProbe } from '../engine/privileges.js';

interface Access {
  request<T = unknown>(method: HttpMethod, path: string, body?: unknown, query?: Record<string, string>): Promise<T>;
}

const BLOCKS = ['index.blocks.read_only_allow_delete', 'index.blocks.read_only', 'index.blocks.write'] as const;

function encodeName(name: string): string {
  return encodeURIComponent(name).replace(/%2C/gi, ',').replace(/%2A/gi, '*');
}

/**
 * Refuses, before anything is written, an index behind `name` that has a write block, and (given a client
 * that can send bulk requests, unless `probe` is false) a user who may not write there as the job will, or
 * refresh it: asked in requests that change nothing (engine/privileges.ts).
 */
export async function requireWritable(client: Access | PrivilegeProbeAccess, name: string, probe: WriteProbe | false = { action: 'update', refresh: true }): Promise<void> {
  // With the uuid, every index behind the name answers (the blocks alone leave out an index that has none).
  const settings = await client.request<Record<string, { settings: Record<string, unknown> }>>('GET', `/${encodeName(name)}/_settings/index.blocks.*,index.uuid`, undefined, { flat_settings: 'true' });
  for (const [index, { settings: s }] of Object.entries(settings ?? {})) {
    const block = BLOCKS.find((b) => s?.[b] === 'true' || s?.[b] === true);
    if (block) throw new UserError(describeBlock(block, index));
  }
  const first = Object.keys(settings ?? {}).sort()[0];
  if (probe && first !== undefined && 'bulkNdjson' in client) await requireWritePrivileges(client, first, name, probe);
}

/** The closed indices a name (a pattern, an alias) matches: searches pass over them. */
export async function closedIndicesBehind(client: Access, name: string): Promise<string[]> {
  try {
    const resolved = await client.request<{ indices?: Array<{ name: string; attributes?: string[] }> }>('GET', `/_resolve/index/${encodeName(name)}`, undefined, { expand_wildcards: 'all' });
    return (resolved.indices ?? []).filter((i) => i.attributes?.includes('closed')).map((i) => i.name).sort();
  } catch {
    return []; // nothing resolved, or an engine without the API: nothing known to be closed
  }
}

/** The data streams a name (a stream, a pattern, an alias) stands for; [] where there are none or the engine has none. */
export async function dataStreamsBehind(client: Pick<Access, 'request'>, name: string): Promise<string[]> {
  try {
    const resolved = await client.request<{ data_streams?: Array<{ name: string }> }>('GET', `/_resolve/index/${encodeName(name)}`);
    return (resolved.data_streams ?? []).map((s) => s.name).sort();
  } catch {
    return []; // a name that resolves to nothing, or an engine without the API: no data stream to care for
  }
}
