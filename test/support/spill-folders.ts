// Spill folders for the tests of what dedup spills: each test runs with a folder of its own under one
// scratch folder, removed after it, the scratch folder removed after the file's tests.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { SpillFolder } from '../../src/jobs/dedup/spill/spill-folder.js';

/** `inFolder(test)` runs `test` with a spill folder of its own, removed after; `scratch` is where they are made. */
export function spillFolders(prefix: string): { scratch: string; inFolder: <T>(test: (folder: SpillFolder) => T | Promise<T>) => Promise<T> } {
  const scratch = mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const inFolder = async <T>(test: (folder: SpillFolder) => T | Promise<T>): Promise<T> => {
    const folder = new SpillFolder(scratch);
    try {
      return await test(folder);
    } finally {
      folder.remove();
    }
  };
  return { scratch, inFolder };
}
