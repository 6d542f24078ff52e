// dedup's spill folder: a live spill is told from an abandoned one from any PID namespace (a container's run
// has a pid this one cannot see), a folder it cannot make is one line naming the value and the way out, and a
// disk that fills is said with its folder and what the spill needs. Holders are real processes (the built
// module, in dist/), killed with SIGKILL; what only a damaged machine gives (EROFS, ENOSPC) is injected at the
// file system's own functions.
import { type ChildProcess, spawn } from 'node:child_process';
import fs, { existsSync, mkdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { fromWorker, SpillFolder, writeAll } from '../../src/jobs/dedup/spill/spill-folder.js';
import { beaterOnline, OWN_SPACE } from '../../src/jobs/dedup/spill/spill-liveness.js';
import { spillFolders } from '../support/spill-folders.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(here, '../../dist/jobs/dedup/spill');
const built = existsSync(path.join(DIST, 'spill-liveness.js'));
const { scratch } = spillFolders('nd-spill-folder-');

/** A short stale period, so that a test waits a fraction of a second, not minutes. */
const STALE_MS = 600;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** A process running `code` (an ES module given the built folder as argv[1]), once it has printed its first line. */
async function holder(code: string, ...args: string[]): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', code, DIST, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b) => {
      out += b;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('exit', (code) => reject(new Error(`the holder ended (${code}) before it said anything`)));
  });
  return { child, line };
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** A run that shares the parent: it removes the abandoned folders it finds, then its own. */
function nextRun(staleAfterMs = STALE_MS): void {
  new SpillFolder(scratch, { staleAfterMs }).remove();
}

describe.skipIf(!built)('spill folders of other runs, from any PID namespace', () => {
  it('a live spill whose pid is not seen here is kept while its holder touches it, and taken once the holder is killed and the stale period has passed', async () => {
    // Named as a run in another namespace would name it: a pid that does not run here, another tag.
    const otherSpace = OWN_SPACE === '0badf00d' ? '0badf00e' : '0badf00d';
    const spill = path.join(scratch, `near-dup-spill-2147483000-${otherSpace}-AbC123`);
    mkdirSync(spill);
    writeFileSync(path.join(spill, 'band-0-members.bin'), 'live');
    const long = new Date(Date.now() - 3600_000);
    utimesSync(spill, long, long);
    const { child } = await holder(
      `const { startBeating } = await import(process.argv[1] + '/spill-liveness.js'); startBeating(process.argv[2], 25); setInterval(() => {}, 1 << 30); console.log('beating');`,
      spill,
    );
    // Two stale periods, a run looking after each.
    for (let k = 0; k < 2; k++) {
      await sleep(STALE_MS);
      nextRun();
      expect(existsSync(path.join(spill, 'band-0-members.bin'))).toBe(true);
    }
    await killed(child);
    // Just killed: it might be a run stopped a moment elsewhere, so it is kept until the stale period passes.
    nextRun();
    expect(existsSync(spill)).toBe(true);
    await sleep(STALE_MS + 100);
    nextRun();
    expect(existsSync(spill)).toBe(false);
  });

  it("a spill of this host and namespace whose holder was killed is taken by the next run at once; a live holder's is kept, touched or not", async () => {
    const code = `const { SpillFolder } = await import(process.argv[1] + '/spill-folder.js'); const f = new SpillFolder(process.argv[2]); f.create('records.bin'); setInterval(() => {}, 1 << 30); console.log(f.path);`;
    const dead = await holder(code, scratch);
    const live = await holder(code, scratch);
    const long = new Date(Date.now() - 3600_000);
    utimesSync(live.line, long, long);
    await killed(dead.child);
    nextRun(3600_000);
    expect([existsSync(dead.line), existsSync(path.join(live.line, 'records.bin'))]).toEqual([false, true]);
  });

  it('a folder is touched while it is held, however long this thread is busy, and removed when let go', async () => {
    const folder = new SpillFolder(scratch, { beatMs: 20 });
    await beaterOnline();
    await sleep(100); // (its timer set)
    const long = new Date(Date.now() - 3600_000);
    utimesSync(folder.path, long, long);
    // Busy, as a band sorted on this thread or a pass over the records keeps it, with no timer of its own run.
    for (const until = Date.now() + 300; Date.now() < until; );
    expect(statSync(folder.path).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    folder.remove();
    expect(existsSync(folder.path)).toBe(false);
  });
});

/** Runs `test` with `name` of node:fs answering `code` (each ESM import of it too), then puts it back. */
function withFailing<T>(name: 'mkdtempSync' | 'writeSync', code: string, test: () => T): T {
  const original = fs[name];
  (fs as any)[name] = () => {
    throw Object.assign(new Error(`${code}: injected`), { code });
  };
  syncBuiltinESMExports();
  try {
    return test();
  } finally {
    (fs as any)[name] = original;
    syncBuiltinESMExports();
  }
}

/** The message of what `make` throws, which must be a UserError. */
function refusal(make: () => unknown): string {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return (err as Error).message;
  }
  throw new Error('nothing was refused');
}

describe('a folder the spill cannot be made in', () => {
  const fix = "give a folder near-dup may write to, or leave the option out to use the system's temporary folder";

  it('a file, a missing folder, a dangling link: one line naming the value and the way out', () => {
    const file = path.join(scratch, 'a-file');
    writeFileSync(file, 'x');
    const missing = path.join(scratch, 'no-such-folder');
    const dangling = path.join(scratch, 'dangling');
    symlinkSync(path.join(scratch, 'gone'), dangling);
    expect(refusal(() => new SpillFolder(file))).toBe(`limits.spillDir ${file}: not a folder; ${fix}`);
    expect(refusal(() => new SpillFolder(path.join(file, 'below')))).toBe(`limits.spillDir ${path.join(file, 'below')}: not a folder; ${fix}`);
    expect(refusal(() => new SpillFolder(missing))).toBe(`limits.spillDir ${missing}: no such folder; ${fix}`);
    expect(refusal(() => new SpillFolder(dangling))).toBe(`limits.spillDir ${dangling}: a link to ${path.join(scratch, 'gone')}, which does not exist; ${fix}`);
  });

  it.skipIf(process.platform !== 'linux')('read-only and unwritable places: /proc, /sys, a read-only file system (injected: root writes anywhere else)', () => {
    expect(refusal(() => new SpillFolder('/proc'))).toBe(`limits.spillDir /proc: no folder can be made there; ${fix}`);
    expect(refusal(() => new SpillFolder('/sys'))).toBe(`limits.spillDir /sys: near-dup may not write there (permission denied); ${fix}`);
    expect(withFailing('mkdtempSync', 'EROFS', () => refusal(() => new SpillFolder(scratch)))).toBe(`limits.spillDir ${scratch}: on a read-only file system; ${fix}`);
    expect(withFailing('mkdtempSync', 'EACCES', () => refusal(() => new SpillFolder(scratch)))).toBe(`limits.spillDir ${scratch}: near-dup may not write there (permission denied); ${fix}`);
  });

  it("the system's temporary folder, when no folder was given, is named as such with the option and TMPDIR", () => {
    expect(withFailing('mkdtempSync', 'ENOSPC', () => refusal(() => new SpillFolder()))).toBe(
      `the system's temporary folder ${os.tmpdir()} (where dedup spills without limits.spillDir): its disk is full; give limits.spillDir a folder near-dup may write to, or set TMPDIR to one`,
    );
  });

  it('an error the folder does not explain is passed on as it is', () => {
    expect(() => withFailing('mkdtempSync', 'EIO', () => new SpillFolder(scratch))).toThrow(/^EIO: injected$/);
  });
});

describe('a disk that fills under the spill', () => {
  it("said by the sorting worker (which keeps only an error's message across threads), is the same one line here", () => {
    const said = 'the disk of /x is full (0 KB free): dedup could not write a file of its spill /x/s, which needs at least 4 KB more there; nothing was written to the index: free room there, or give limits.spillDir a folder on a disk with room, and run the same command again';
    const here = fromWorker(new Error(said));
    expect(here).toBeInstanceOf(UserError);
    expect((here as UserError).messageNaming(() => '--spill-dir')).toBe(said.replace('limits.spillDir', '--spill-dir'));
    const other = new Error('ENOENT: no such file or directory');
    expect(fromWorker(other)).toBe(other);
  });

  it('is said with the disk, the file and its folder, and what the spill needs in all when it knows', () => {
    const folder = new SpillFolder(scratch);
    try {
      const fd = folder.create('records.bin');
      writeAll(fd, new Uint8Array(3 * 1024 * 1024));
      folder.expectedBytes = 10 * 1024 * 1024;
      const message = withFailing('writeSync', 'ENOSPC', () => refusal(() => writeAll(fd, new Uint8Array(1024))));
      expect(message).toMatch(
        new RegExp(
          `^the disk of ${scratch} is full \\(.+ free\\): dedup could not write records\\.bin of its spill ${folder.path}, which needs about 7\\.0 MB more there \\(10\\.0 MB in all, 3\\.0 MB written\\); nothing was written to the index: free room there, or give limits\\.spillDir a folder on a disk with room, and run the same command again$`,
        ),
      );
      // Without an estimate, at least what was left of the write.
      folder.expectedBytes = 0;
      expect(withFailing('writeSync', 'EDQUOT', () => refusal(() => writeAll(fd, new Uint8Array(4096))))).toMatch(/which needs at least 4 KB more there \(beside the 3\.0 MB written\)/);
    } finally {
      folder.remove();
    }
  });
});
