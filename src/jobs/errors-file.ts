// The ids and reasons of documents that failed, one JSON line each, opened on the first failure. Appended
// to, never through a symbolic link to a file (file-writes.ts). A file that cannot be written (its disk
// full) does not stop the job that lists into it: the job goes on to its end, and closing says so.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.js';
import { openForAppend } from './file-writes.js';

export class ErrorsFile {
  private stream?: WriteStream;
  /** Why the file could not be written, once it could not. */
  private failure?: NodeJS.ErrnoException;
  count = 0;

  constructor(readonly file: string) {}

  /** The errors file of a job on `index`: the one given, or near-dup-errors-INDEX.jsonl in the working folder. */
  static forIndex(index: string, file?: string): ErrorsFile {
    return new ErrorsFile(file ?? `near-dup-errors-${index.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`);
  }

  add(record: { id?: unknown; reason: string; status?: number; [key: string]: unknown }): void {
    if (!this.stream) {
      mkdirSync(path.dirname(path.resolve(this.file)), { recursive: true });
      this.stream = createWriteStream(this.file, { fd: openForAppend(this.file, { what: 'the errors file' }) });
      this.stream.on('error', (err) => void (this.failure ??= err));
    }
    this.count++;
    if (!this.failure) this.stream.write(JSON.stringify({ time: new Date().toISOString(), ...record }) + '\n');
  }

  /** Ends the file; one that could not be written is said, with its folder and the way out. */
  async close(): Promise<void> {
    const stream = this.stream;
    if (!stream) return;
    await new Promise<void>((resolve) => stream.end(() => resolve()));
    const failure = this.failure;
    if (!failure) return;
    const folder = path.dirname(path.resolve(this.file));
    const full = failure.code === 'ENOSPC' || failure.code === 'EDQUOT';
    throw new UserError(
      (o) =>
        `the errors file ${this.file} could not be written (${full ? `the disk of ${folder} is full` : failure.message}): ${this.count} documents failed, not all of them listed there; ` +
        `${full ? 'free room there' : 'mend it'}, or give ${o('errorsFile')} a file elsewhere, and run the same command again`,
    );
  }
}
