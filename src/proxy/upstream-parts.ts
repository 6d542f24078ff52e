// One client request body sent upstream as one or more requests (parts) of about `maxBytes`, each started
// when the one before it has been answered, so the engine sees the items in order. Writes wait for the
// socket (back-pressure): memory holds what is in flight, never the whole body. A part the engine refuses
// as a whole (429 from a circuit breaker, say) stops the sending; the items of that part and those after it
// are kept (verb, index, id) so the client can be told which items were not applied.
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';
import { readBody, type Upstream, type UpstreamResponse } from '../engine/forward.js';

/** What the answer needs of a forwarded item: its verb and where it was going. */
export interface PartItem {
  verb: string;
  index?: string;
  id?: string;
}

/** The engine's answer to a part, with the items written to it (emptied once the part was applied). */
export interface PartAnswer extends UpstreamResponse {
  items: PartItem[];
}

interface OpenPart {
  request: http.ClientRequest;
  response: Promise<UpstreamResponse>;
  bytes: number;
  items: PartItem[];
}

export class UpstreamParts {
  private current: OpenPart | undefined;
  private readonly answers: PartAnswer[] = [];
  /** A part the engine refused as a whole: nothing more is sent, and later items join its list. */
  private refusedPart: PartAnswer | undefined;
  /** The client went away: nothing more is sent. */
  private aborted = false;
  /** Time spent waiting for the engine's answers, ms. */
  waitedMs = 0;

  constructor(
    private readonly upstream: Upstream,
    private readonly method: string,
    private readonly pathAndQuery: string,
    private readonly headers: readonly string[],
    private readonly maxBytes: number,
  ) {}

  /** Writes chunks (a whole item when `item` is given) to the open part; a part past the size is then closed and answered. */
  async write(chunks: Uint8Array[], item?: PartItem): Promise<void> {
    if (this.aborted) return;
    if (this.refusedPart) {
      if (item) this.refusedPart.items.push(item);
      return;
    }
    const part = this.current ?? this.open();
    for (const chunk of chunks) {
      part.bytes += chunk.length;
      if (!part.request.write(chunk)) await drained(part.request);
    }
    if (!item) return;
    part.items.push(item);
    if (part.bytes >= this.maxBytes) await this.close();
  }

  /** Closes the last part and gives every answer; the last one's body not yet read. With `always`, sends an empty part if nothing was sent, for the engine's own answer. */
  async finish(always: boolean): Promise<PartAnswer[]> {
    if (!this.current && always && this.answers.length === 0) this.open();
    if (this.current) await this.close(true);
    return this.answers;
  }

  /** Cuts the open part off (the client went away, or its body could not be read), and sends nothing more. */
  abort(): void {
    this.current?.request.destroy();
    this.current = undefined;
    this.aborted = true;
  }

  private open(): OpenPart {
    const { request, response } = this.upstream.send(this.method, this.pathAndQuery, this.headers);
    this.current = { request, response, bytes: 0, items: [] };
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
      const read: PartAnswer = { ...answer, body, items: answer.status >= 300 ? part.items : [] };
      this.answers.push(read);
      if (answer.status >= 300) this.refusedPart = read;
    } else this.answers.push({ ...answer, items: part.items });
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
