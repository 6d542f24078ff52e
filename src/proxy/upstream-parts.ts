// One client request body sent upstream as one or more requests (parts) of about `maxBytes`, each started
// when the one before it has been answered, so the engine sees the items in order. Writes wait for the
// socket (back-pressure): memory holds what is in flight, never the whole body.
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';
import { readBody, type Upstream, type UpstreamResponse } from '../engine/forward.js';

interface OpenPart {
  request: http.ClientRequest;
  response: Promise<UpstreamResponse>;
  bytes: number;
}

export class UpstreamParts {
  private current: OpenPart | undefined;
  private readonly answers: UpstreamResponse[] = [];
  /** A part the engine refused as a whole: nothing more is sent. */
  private stopped = false;
  /** Time spent waiting for the engine's answers, ms. */
  waitedMs = 0;

  constructor(
    private readonly upstream: Upstream,
    private readonly method: string,
    private readonly pathAndQuery: string,
    private readonly headers: readonly string[],
    private readonly maxBytes: number,
  ) {}

  /** Writes chunks to the open part; at an item's end, a part past the size is closed and answered first. */
  async write(chunks: Uint8Array[], itemEnd: boolean): Promise<void> {
    if (this.stopped) return;
    const part = this.current ?? this.open();
    for (const chunk of chunks) {
      part.bytes += chunk.length;
      if (!part.request.write(chunk)) await drained(part.request);
    }
    if (itemEnd && part.bytes >= this.maxBytes) await this.close();
  }

  /** Closes the last part and gives every answer; the last one's body not yet read. With `always`, sends an empty part if nothing was sent, for the engine's own answer. */
  async finish(always: boolean): Promise<UpstreamResponse[]> {
    if (!this.current && always && this.answers.length === 0) this.open();
    if (this.current) await this.close(true);
    return this.answers;
  }

  /** Cuts the open part off (the client went away, or its body could not be read), and sends nothing more. */
  abort(): void {
    this.current?.request.destroy();
    this.current = undefined;
    this.stopped = true;
  }

  private open(): OpenPart {
    const { request, response } = this.upstream.send(this.method, this.pathAndQuery, this.headers);
    this.current = { request, response, bytes: 0 };
    return this.current;
  }

  private async close(last = false): Promise<void> {
    const part = this.current as OpenPart;
    this.current = undefined;
    part.request.end();
    const waitStart = performance.now();
    const answer = await part.response;
    if (!last) {
      // Read now, so the next part can go: the bulk answer is small next to the body.
      const body = new PassThrough();
      body.end(await readBody(answer.body));
      this.answers.push({ ...answer, body });
      if (answer.status >= 300) this.stopped = true;
    } else this.answers.push(answer);
    this.waitedMs += performance.now() - waitStart;
  }
}

function drained(request: http.ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      request.off('drain', done);
      request.off('close', done);
      resolve();
    };
    request.on('drain', done);
    request.on('close', done);
  });
}
