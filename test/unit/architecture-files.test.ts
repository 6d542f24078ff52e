// ARCHITECTURE.md names every file of the folders it lists file by file, so that a reader who opens one finds
// what it is for there, and a file added without its line fails here instead of going unseen. Other folders
// of src/ are described as a whole and are not held to this.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..', '..');

/** The folders of src/ that ARCHITECTURE.md lists a line a file (today dedup's stages only). */
const LISTED_FOLDERS = ['src/jobs/dedup'];

/** Every .ts file under `folder` (relative to the repository), by its path relative to `folder`. */
function tsFiles(folder: string): string[] {
  return readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })
    .map((file) => file.split(path.sep).join('/'))
    .filter((file) => file.endsWith('.ts'))
    .sort();
}

/** The files of `folder` that `doc` does not name in backquotes, by their path in `folder` or from the root. */
function unnamedFiles(doc: string, folder: string, files: string[]): string[] {
  return files.filter((file) => !doc.includes(`\`${file}\``) && !doc.includes(`\`${folder}/${file}\``));
}

const architecture = readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8');

describe('ARCHITECTURE.md', () => {
  for (const folder of LISTED_FOLDERS) {
    it(`names every file of ${folder}`, () => {
      const files = tsFiles(folder);
      expect(files.length).toBeGreaterThan(0);
      expect(unnamedFiles(architecture, folder, files)).toEqual([]);
    });
  }

  it('is found wanting when a file’s line is taken out', () => {
    const folder = 'src/jobs/dedup';
    const line = architecture.split('\n').find((l) => l.includes('`scan/table-read.ts`'));
    expect(line).toBeDefined();
    const without = architecture.replace(`${line}\n`, '');
    expect(unnamedFiles(without, folder, tsFiles(folder))).toContain('scan/table-read.ts');
    const byFullPath = `${without}\`src/jobs/dedup/scan/table-read.ts\``;
    expect(unnamedFiles(byFullPath, folder, tsFiles(folder))).not.toContain('scan/table-read.ts');
  });
});
