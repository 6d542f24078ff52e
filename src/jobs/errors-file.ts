// The ids and reasons of documents that failed, one JSON line each, opened on the first failure.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';

export class ErrorsFile {
  private stream?: WriteStream;
  count = 0;

  constructor(readonly file: string) {}

  add(record: { id?: unknown; reason: string; status?: number; [key: string]: unknown }): void {
    if (!this.stream) {
      mkdirSync(path.dirname(path.resolve(this.file)), { recursive: true });
      this.stream = createWriteStream(this.file, { flags: 'a' });
    }
    this.count++;
    this.stream.write(JSON.stringify({ time: new Date().toISOString(), ...record }) + '\n');
  }

  async close(): Promise<void> {
    const stream = this.stream;
    if (!stream) return;
    await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}
