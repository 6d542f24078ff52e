// Where a worker thread's code is, for the modules that start threads (signing, dedup's band sort and bucket
// check): the compiled .js beside the module that starts it; when that module runs from the TypeScript
// sources (the tests), the build of the same code in dist/ (npm test builds first).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The folder this module runs from (src/ or dist/): a caller's place is taken relative to it. */
const ROOT = new URL('./', import.meta.url);

/** The URL of `worker` ('./sign-worker.js') beside the module at `caller` (its import.meta.url), else of its build in dist/. */
export function workerFile(worker: string, caller: string): string {
  const beside = new URL(worker, caller);
  if (existsSync(fileURLToPath(beside)) || !beside.href.startsWith(ROOT.href)) return beside.href;
  return new URL(`../dist/${beside.href.slice(ROOT.href.length)}`, ROOT).href;
}
