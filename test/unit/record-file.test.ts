// The spill layer's record file: the same bytes back from memory and from disk, its file made in the run's own
// folder with O_EXCL (a file planted under its name is refused, never followed) and mode 0600, and a file
// shortened under the run said, never read as zeros.
import { statSync, symlinkSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordFile } from '../../src/jobs/dedup/spill/record-file.js';
import { spillFolders } from '../support/spill-folders.js';

const { inFolder } = spillFolders('nd-record-file-');

describe('the record file of the spill layer', () => {
  it('gives back what was appended and written, in memory as on disk (appends past its buffer, writes past its end)', async () => {
    await inFolder((folder) => {
      for (const file of [recordFile('a.bin'), recordFile('a.bin', folder, 8), recordFile('b.bin', folder, 0)]) {
        expect(file.append(Uint8Array.of(1, 2, 3))).toBe(0);
        expect(file.append(Uint8Array.from({ length: 20 }, (_, k) => k))).toBe(3);
        file.write(1, Uint8Array.of(9));
        file.write(30, Uint8Array.of(7, 7));
        expect(file.length).toBe(32);
        const back = new Uint8Array(32);
        file.read(0, back);
        expect(Array.from(back)).toEqual([1, 9, 3, ...Array.from({ length: 20 }, (_, k) => k), 0, 0, 0, 0, 0, 0, 0, 7, 7]);
        expect(Array.from(file.view(21, 3))).toEqual([18, 19, 0]);
        file.write(22, Uint8Array.of(5));
        expect(Array.from(file.view(21, 3))).toEqual([18, 5, 0]); // (a view after a write sees it)
        file.write(22, Uint8Array.of(19));
        file.truncate();
        expect(file.length).toBe(0);
        expect(file.append(Uint8Array.of(5))).toBe(0);
      }
    });
  });

  it('writes what it gathered to its file when flushed, so that a thread reading the file by its path sees it all', async () => {
    await inFolder((folder) => {
      const file = recordFile('gathered.bin', folder, 64);
      file.append(new Uint8Array(40));
      expect(statSync(path.join(folder.path, 'gathered.bin')).size).toBe(0);
      file.flush();
      expect(statSync(path.join(folder.path, 'gathered.bin')).size).toBe(40);
    });
  });

  it('makes its file in the run\'s own folder, 0600, and refuses a file planted under its name', async () => {
    await inFolder((folder) => {
      recordFile('records.bin', folder).append(Uint8Array.of(1));
      expect(statSync(path.join(folder.path, 'records.bin')).mode & 0o777).toBe(0o600);
      symlinkSync('/etc/passwd', path.join(folder.path, 'planted.bin'));
      expect(() => recordFile('planted.bin', folder)).toThrow(/EEXIST/);
    });
  });

  it('says a file shortened under the run', async () => {
    await inFolder((folder) => {
      const file = recordFile('records.bin', folder, 0);
      file.append(new Uint8Array(100));
      truncateSync(path.join(folder.path, 'records.bin'), 10);
      expect(() => file.read(0, new Uint8Array(100))).toThrow(/its folder was changed while dedup ran/);
    });
  });
});
