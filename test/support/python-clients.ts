// The Python clients that tests drive the proxy with (opensearch-py, elasticsearch): a virtual environment
// made once under .engines/ with pinned versions from PyPI. Python is a test tool here, never a dependency
// of the product.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
export const PYTHON_CLIENTS = ['opensearch-py==3.2.0', 'elasticsearch==9.5.1'];
const venv = process.env.NEAR_DUP_PYTHON_VENV ?? path.join(root, '.engines', 'python-clients');

/** The venv's python, with the clients installed (made on first use, about a minute). */
export async function pythonWithClients(): Promise<string> {
  const python = path.join(venv, 'bin', 'python');
  const marker = path.join(venv, 'near-dup-clients.txt');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === PYTHON_CLIENTS.join('\n')) return python;
  const system = process.env.PYTHON ?? 'python3';
  await run(system, ['-m', 'venv', venv]);
  await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...PYTHON_CLIENTS], { maxBuffer: 16 * 1024 * 1024 });
  writeFileSync(marker, PYTHON_CLIENTS.join('\n'));
  return python;
}

/** Runs test/support/python_bulk.py: the client's helpers.bulk over an NDJSON file of documents. */
export async function pythonBulk(python: string, args: { flavour: string; url: string; index: string; file: string; textless?: boolean }): Promise<{ success: number; errors: Array<Record<string, any>> }> {
  const script = path.join(root, 'test', 'support', 'python_bulk.py');
  const { stdout } = await run(python, [script, args.flavour, args.url, args.index, args.file], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout.trim().split('\n').pop() as string);
}
