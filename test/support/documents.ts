// Test documents in and out of a real engine, and the command line as a child process: the helpers the
// integration tests share.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import type { EngineClient } from '../../src/engine/client.js';

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
