// Test documents in and out of a real engine, and the command line as a child process: the helpers the
// integration tests share.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import { nearDupFields } from '../../src/annotation.js';
import type { EngineClient } from '../../src/engine/client.js';
import type { Signer } from '../../src/signature.js';
import { keyList } from '../../src/stored/read.js';

export const CLI = path.resolve(__dirname, '../../dist/cli/main.js');

/** Indexes documents with their `id` as _id, 100 a request, and makes them visible. */
export async function indexDocuments(client: EngineClient, index: string, items: ReadonlyArray<{ id: string } | object>): Promise<void> {
  const lines = items.flatMap((d) => [{ index: { _index: index, _id: (d as { id: string }).id } }, d]);
  for (let i = 0; i < lines.length; i += 200) expect((await client.bulk(lines.slice(i, i + 200))).errors).toBe(false);
  await client.refresh(index);
}

/** Every document's source by id (up to 1,000), after a refresh. */
export async function sourcesById(client: EngineClient, index: string): Promise<Map<string, Record<string, any>>> {
  await client.refresh(index);
  const response = await client.search(index, { size: 1000, query: { match_all: {} } });
  return new Map(response.hits.hits.map((h) => [h._id, h._source as Record<string, any>]));
}

/** near-dup as a child process; `done` resolves with its exit and output. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

/**
 * The records (JSON lines) an `annotate --follow` child writes to its standard error, each parsed as its
 * whole line comes in, and the text of the line not finished yet (for a test's failure message).
 */
export function followRecords(child: ChildProcess): { records: any[]; unfinished: () => string } {
  const records: any[] = [];
  let buffered = '';
  child.stderr?.on('data', (b: Buffer) => {
    buffered += b.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line.includes('"annotate-follow"')) records.push(JSON.parse(line));
  });
  return { records, unfinished: () => buffered };
}

/** near-dup run to its end, with its last stdout line parsed as JSON (undefined when it is not JSON). */
export async function runCliJson(args: string[]) {
  const result = await runCli(args).done;
  let json: any;
  try {
    json = JSON.parse(result.stdout.trim().split('\n').pop() ?? '');
  } catch {
    json = undefined;
  }
  return { ...result, json };
}

/**
 * The signature fields of a document's near-dup object: without the time of annotation and the cluster
 * fields, the key lists (SimHash blocks, sample) as lists whichever way they were written (an index's mapping
 * decides that; tests of the written form look at it directly).
 */
export function signatureFields(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!fields) return fields;
  const { annotated_at: _t, cluster_id: _c, duplicate_of: _d, is_canonical: _i, cluster_size: _s, max_similarity: _m, canonical_similarity: _cs, best_match: _b, ...rest } = fields;
  for (const name of ['simhash_blocks', 'sample']) if (name in rest) rest[name] = keyList(rest[name]) ?? rest[name];
  return rest;
}

/** The signature fields an uninterrupted annotate writes for each document, by id. */
export function expectedSignatures(signer: Signer, docs: ReadonlyArray<{ id: string; text: string }>): Map<string, Record<string, unknown> | undefined> {
  return new Map(docs.map((d) => [d.id, signatureFields(nearDupFields(signer(d.text), signer.settings) as never)]));
}

/** The index holds every document with exactly its own user fields and the signature of an uninterrupted run. */
export async function expectCleanIndex(
  client: EngineClient,
  index: string,
  docs: ReadonlyArray<{ id: string }>,
  expected: Map<string, Record<string, unknown> | undefined>,
): Promise<void> {
  const stored = await sourcesById(client, index);
  expect(stored.size).toBe(docs.length);
  const wrong: string[] = [];
  for (const doc of docs) {
    const { near_dup, ...rest } = stored.get(doc.id) ?? {};
    expect(JSON.stringify(rest), `user fields of ${doc.id}`).toBe(JSON.stringify(doc));
    if (!isDeepStrictEqual(signatureFields(near_dup), expected.get(doc.id))) wrong.push(doc.id);
  }
  expect(wrong, 'documents without the signature of an uninterrupted run').toEqual([]);
}
