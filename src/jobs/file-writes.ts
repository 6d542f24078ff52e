// Every file near-dup writes goes through here, so that none is written through a symbolic link someone
// else planted (a link at a predictable name would make near-dup overwrite, or append to, the file it
// points to). The rules, by kind of file:
//
// - Whole files (checkpoints, dedup state, follow marks, evaluate's report and plots, dedup --output): written
//   to a fresh temporary file beside the target (a random name, created with O_CREAT|O_EXCL, which never
//   follows a link), flushed to the disk, then renamed over the target. A link at the target is replaced
//   by the new file, never followed; a crash leaves the old file or the new one, never half of one; a
//   failure removes the temporary file. State files are made 0600 (only their owner reads them).
// - Files appended to or streamed (the errors file, the dedup journal's pairs, dedup --pairs): opened with
//   O_NOFOLLOW, so a link there is refused with a message, except a link to a terminal, pipe, socket or
//   other character device (--errors-file /dev/stderr), which cannot be a file that would be damaged. A
//   link to a block device (a disk: its file system would be overwritten) is refused like one to a file.
// - A user-named output that is a terminal, pipe or character device (dedup --output /dev/stdout, a process
//   substitution) is written into, as the user asked; a block device is refused.
// - near-dup's own state folder (.near-dup) must be a real folder of the user running near-dup: one that is
//   a symbolic link, or another user's, is refused. Folders in a path the user typed are the user's choice.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, createWriteStream, fstatSync, openSync, type WriteStream } from 'node:fs';
import { lstat, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';

/** The folder near-dup keeps its state in by default (checkpoints, dedup state, follow marks). */
export const STATE_FOLDER = '.near-dup';

/** O_NOFOLLOW where the platform has it (Windows has no such flag and no such links to plant). */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/** How a file is replaced: the mode it is made with. */
export interface ReplaceOptions {
  /** File mode of a new file (the umask applies): 0o600 for state, 0o666 (the default) for outputs. */
  mode?: number;
}

/**
 * Writes `data` as the whole new content of `file`: a fresh temporary file (random name, O_EXCL, `mode`),
 * fsync, rename over `file`, fsync of the folder. A symbolic link at `file` is replaced, not followed.
 */
export async function replaceFile(file: string, data: string | Uint8Array, options: ReplaceOptions = {}): Promise<void> {
  const dir = path.dirname(file);
  await ensureFolder(dir);
  // Beside the file (a rename does not cross file systems), hidden, its name cut to stay within NAME_MAX.
  const tmp = path.join(dir, `.${path.basename(file).slice(0, 200)}.${randomBytes(8).toString('hex')}.tmp`);
  // 'wx': O_CREAT|O_EXCL. Fails on anything already there, a symbolic link included, instead of following it.
  const kept = `${Buffer.byteLength(data).toLocaleString('en')} bytes to write; the file as it was is kept`;
  const handle = await open(tmp, 'wx', options.mode ?? 0o666).catch((err: unknown) => {
    throw diskFullError(err, file, kept);
  });
  let renamed = false;
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
    renamed = true;
  } catch (err) {
    throw diskFullError(err, file, kept);
  } finally {
    if (!renamed) await unlink(tmp).catch(() => undefined);
  }
  await syncFolder(dir);
}

/** A full disk said with the file, its folder, what became of the file (`kept`) and the way out; any other error as it is. */
export function diskFullError(err: unknown, file: string, kept: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'ENOSPC' && code !== 'EDQUOT') return err;
  return new UserError(`cannot write ${file}: the disk of ${path.dirname(path.resolve(file))} is full (${kept}); free room there, and run the same command again`);
}

/** A stream into `file` (opened with openForWriting or openForAppend) whose failure, a full disk, does not end the process: it is said by closeStream. */
export function streamInto(file: string, fd: number): WriteStream {
  const stream = createWriteStream(file, { fd });
  const written: { file: string; failure?: Error } = { file };
  streams.set(stream, written);
  stream.on('error', (err) => void (written.failure ??= err));
  return stream;
}

/** Each stream of streamInto: its file, and its first failure. */
const streams = new WeakMap<WriteStream, { file: string; failure?: Error }>();

/** Ends a stream of streamInto; its first failure is said (`kept`: what the file holds then). */
export async function closeStream(stream: WriteStream, kept: string): Promise<void> {
  await new Promise<void>((resolve) => stream.end(() => resolve()));
  const written = streams.get(stream);
  if (written?.failure) throw diskFullError(written.failure, written.file, kept);
}

/**
 * A whole output file the user named (dedup --output): replaced through a temporary file like any other,
 * unless it is a terminal, pipe or device (/dev/stdout, a process substitution), which is written into.
 */
export async function writeOutputFile(file: string, data: string | Uint8Array): Promise<void> {
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isBlockDevice()) throw blockDevice(file, 'the output');
  if (existing && !existing.isFile() && !existing.isDirectory()) {
    // Opened without O_CREAT or O_TRUNC: checked again once open, so a regular file (or a disk) swapped in meanwhile is never written.
    const handle = await open(file, constants.O_WRONLY);
    try {
      const opened = await handle.stat();
      if (opened.isBlockDevice()) throw blockDevice(file, 'the output');
      if (isStream(opened)) {
        await handle.writeFile(data);
        return;
      }
    } finally {
      await handle.close();
    }
  }
  await replaceFile(file, data);
}

/** What a link may lead to, or an output may be written into in place: a terminal or other character device, a pipe, a socket. Never a file or a disk. */
function isStream(found: { isCharacterDevice(): boolean; isFIFO(): boolean; isSocket(): boolean }): boolean {
  return found.isCharacterDevice() || found.isFIFO() || found.isSocket();
}

function blockDevice(file: string, what: string): UserError {
  return new UserError(`${what} (${file}) is a block device (a disk, or a link to one); near-dup writes files, terminals and pipes, never a disk: give a file's path`);
}

/**
 * A file descriptor to append to `file`, created with `mode` when new. A symbolic link there is refused
 * (it may point at any file of the user), unless it leads to a terminal, pipe or character device (never a disk).
 */
export function openForAppend(file: string, options: { mode?: number; what?: string } = {}): number {
  return openNoFollow(file, constants.O_APPEND, 'append', options);
}

/**
 * A file descriptor to write a streamed output into from its start (dedup --pairs), created or emptied; a
 * symbolic link there is refused as by openForAppend (a stream cannot be renamed into place whole).
 */
export function openForWriting(file: string, options: { mode?: number; what?: string } = {}): number {
  return openNoFollow(file, constants.O_TRUNC, 'write', options);
}

function openNoFollow(file: string, how: number, verb: string, options: { mode?: number; what?: string }): number {
  try {
    return openSync(file, constants.O_WRONLY | constants.O_CREAT | how | NO_FOLLOW, options.mode ?? 0o666);
  } catch (err) {
    // ELOOP: a symbolic link (EMLINK on FreeBSD, EFTYPE on NetBSD).
    if (!['ELOOP', 'EMLINK', 'EFTYPE'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
  }
  // The link is followed only to what cannot be a damaged file: neither created nor emptied before that is known.
  const fd = openSync(file, constants.O_WRONLY | (how & constants.O_APPEND));
  const found = fstatSync(fd);
  if (!isStream(found)) {
    closeSync(fd);
    if (found.isBlockDevice()) throw blockDevice(file, options.what ?? file);
    throw new UserError(`${options.what ?? file} (${file}) is a symbolic link to a file; near-dup does not ${verb} through links it did not make: give the file's own path, or remove the link`);
  }
  return fd;
}

/**
 * Makes `dir` (and the folders above it) when missing. near-dup's own state folder (.near-dup) is made
 * 0700, and one that is a symbolic link, not a folder, or another user's, is refused: near-dup chose that
 * name, so nothing planted there may redirect what it writes.
 */
export async function ensureFolder(dir: string): Promise<void> {
  const own = path.basename(path.resolve(dir)) === STATE_FOLDER;
  await mkdir(dir, { recursive: true, ...(own ? { mode: 0o700 } : {}) }).catch((err: NodeJS.ErrnoException) => {
    // A link (or file) at the folder's name: said below for near-dup's own folder.
    if (!(own && err.code === 'EEXIST')) throw err;
  });
  if (!own) return;
  const found = await lstat(dir);
  if (found.isSymbolicLink()) {
    throw new UserError(`${dir} is a symbolic link; near-dup keeps its state in a folder of that name and does not follow links it did not make: remove the link (near-dup makes the folder), or give the state file's path explicitly`);
  }
  if (!found.isDirectory()) throw new UserError(`${dir} is not a folder; near-dup keeps its state in a folder of that name: move the file away`);
  const uid = process.getuid?.();
  if (uid !== undefined && found.uid !== uid) {
    throw new UserError(`${dir} belongs to another user (uid ${found.uid}); near-dup keeps its state only in a folder of its own user: remove it, or run near-dup in another folder`);
  }
}

/** Makes a rename in `dir` durable (where folders can be opened and synced: not on Windows). */
async function syncFolder(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
    await handle.sync();
  } catch {
    // Not supported here (EISDIR, EPERM, EINVAL on some platforms and file systems): the rename stands.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Cuts `file` to `length` bytes; a symbolic link there is refused, not followed. */
export async function truncateFile(file: string, length: number): Promise<void> {
  const handle = await open(file, constants.O_WRONLY | NO_FOLLOW).catch((err: NodeJS.ErrnoException) => {
    if (['ELOOP', 'EMLINK', 'EFTYPE'].includes(err.code ?? '')) throw new UserError(`${file} is a symbolic link; near-dup does not write through links it did not make: remove it`);
    throw err;
  });
  try {
    await handle.truncate(length);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
