// Issue 37, item 7: a local user planting a link where near-dup writes an output (dedup --pairs, --output,
// the errors file, often in a shared folder such as /tmp). A link to a terminal or a pipe is followed, as
// /dev/stderr must be; one to a disk is refused like one to a file: written into, it would overwrite the
// disk's file system. The disk here is a loop device over a temporary file (needs root and losetup; skipped
// elsewhere).
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openForAppend, openForWriting, writeOutputFile } from '../../src/jobs/file-writes.js';

/** A loop device over `image`, or undefined where none can be made. */
function loopDevice(image: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    return execFileSync('losetup', ['-f', '--show', image], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const dir = mkdtempSync(path.join(tmpdir(), 'nd-attack-files-'));
const image = path.join(dir, 'disk.img');
writeFileSync(image, Buffer.alloc(64 * 1024));
const device = loopDevice(image);
afterAll(() => {
  if (device) execFileSync('losetup', ['-d', device]);
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(device !== undefined)('a link to a disk', () => {
  const untouched = () => readFileSync(image).every((b) => b === 0);
  const planted = (name: string) => {
    const link = path.join(dir, name);
    symlinkSync(device as string, link);
    return link;
  };
  /** Writes through a descriptor as dedup and the errors file do, should one be given. */
  const writeThrough = (fd: number) => {
    writeSync(fd, 'written into the disk');
    closeSync(fd);
  };

  it('is refused for dedup --pairs, and nothing reaches the disk', () => {
    const link = planted('pairs.ndjson');
    expect(() => writeThrough(openForWriting(link, { what: '--pairs' }))).toThrow(/--pairs .* is a block device/);
    expect(untouched()).toBe(true);
  });

  it('is refused for the errors file', () => {
    const link = planted('errors.ndjson');
    expect(() => writeThrough(openForAppend(link, { what: 'the errors file' }))).toThrow(/block device/);
    expect(untouched()).toBe(true);
  });

  it('is refused for dedup --output', async () => {
    const link = planted('out.json');
    await expect(writeOutputFile(link, 'written into the disk')).rejects.toThrow(/the output .* is a block device/);
    expect(untouched()).toBe(true);
  });
});

describe('a link to a character device', () => {
  it('is still followed (--errors-file /dev/stderr, --output /dev/stdout)', async () => {
    const own = mkdtempSync(path.join(tmpdir(), 'nd-attack-files-'));
    try {
      const link = path.join(own, 'null');
      symlinkSync('/dev/null', link);
      closeSync(openForWriting(link));
      closeSync(openForAppend(link));
      await writeOutputFile(link, 'x');
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});
