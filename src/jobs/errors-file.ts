// The ids and reasons of documents that failed, one JSON line each, opened on the first failure. Appended
// to, never through a symbolic link to a file (file-writes.ts). A file that cannot be written (its disk
// full) does not stop the job that lists into it: the job goes on to its end, and closing says so.
import { mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { closeStream, openForAppend, streamInto } from './file-writes.js';

/**
 * The errors file of a job: opened on the first failure, one JSON line a document, never stopping the job when it
 * cannot be written.
 */
export class ErrorsFile {
  private stream?: WriteStream;
  count = 0;

  constructor(readonly file: string) {}

  /** The errors file of a job on `index`: the one given, or near-dup-errors-INDEX.jsonl in the working folder. */
  static forIndex(index: string, file?: string): ErrorsFile {
    return new ErrorsFile(file ?? `near-dup-errors-${index.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`);
  }

  add(record: { id?: unknown; reason: string; status?: number; [key: string]: unknown }): void {
    if (!this.stream) {
      mkdirSync(path.dirname(path.resolve(this.file)), { recursive: true });
      this.stream = streamInto(this.file, openForAppend(this.file, { what: 'the errors file' }));
    }
    this.count++;
    this.stream.write(JSON.stringify({ time: new Date().toISOString(), ...record }) + '\n');
  }

  /** Ends the file; one its disk could not take is said, with its folder and the way out. */
  async close(): Promise<void> {
    if (this.stream) await closeStream(this.stream, `${this.count} documents failed, not all of them listed there`);
  }
}
