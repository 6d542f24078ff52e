// A worker's code is found beside the module that starts it, or, from the TypeScript sources, in dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { workerFile } from '../../src/worker-file.js';

const src = new URL('../../src/', import.meta.url);
const dist = new URL('../../dist/', import.meta.url);

describe('workerFile', () => {
  it('takes the build in dist/ of a worker that has no .js beside its starter in src/', () => {
    for (const [starter, worker, built] of [
      ['signing/sign-pool.ts', './sign-worker.js', 'signing/sign-worker.js'],
      ['jobs/dedup/bands/band-sort.ts', './band-sort.worker.js', 'jobs/dedup/bands/band-sort.worker.js'],
      ['jobs/dedup/verify/bucket-check.ts', './bucket-check.worker.js', 'jobs/dedup/verify/bucket-check.worker.js'],
    ]) {
      const found = workerFile(worker, new URL(starter, src).href);
      expect(found).toBe(new URL(built, dist).href);
      expect(existsSync(fileURLToPath(found))).toBe(true);
    }
  });

  it('takes the .js beside its starter when there is one', () => {
    const starter = new URL('signing/sign-pool.js', dist).href;
    expect(workerFile('./sign-worker.js', starter)).toBe(new URL('signing/sign-worker.js', dist).href);
  });
});
