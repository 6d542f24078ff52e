// One client request body sent upstream as one or more requests (parts) of about `maxBytes`, each started
// when the one before it has been answered, so the engine sees the items in order. Writes wait for the
// socket (back-pressure): memory holds the part in flight, never the whole body.
//
// A part the engine refuses as a whole for what is in it (400: one id too long, say; 413: too large) is
// sent again in halves, and so on, until only the items it refuses fail, each answered with the engine's
// error in its place: one bad document never costs the others. A part refused for load (429, 5xx) stops
// the sending instead; its items and those after it are kept (verb, index, id) so the client can be told
// which items were not applied, and its bulk helper sends them again.
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';
import { ClientGoneError, readBody, type Upstream, type UpstreamResponse } from '../engine/forward.js';
import { isBlank } from './bulk-items.js';
import { type BulkAnswer, notAppliedAnswer } from './bulk-response.js';
import type { InFlightLimit } from '../engine/in-flight.js';

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

/** An item's bytes (action line, source line), kept until its part is answered, to send again if need be. */
interface Written {
  item: PartItem;
  chunks: Uint8Array[];
}

interface OpenPart {
  request: http.ClientRequest;
  response: Promise<UpstreamResponse>;
  bytes: number;
  written: Written[];
  /** Bytes that are not whole items (passed on unread): such a part is never split. */
  hasRaw: boolean;
}

/** Refusals of a whole request for what is in it, which splitting can narrow down to the guilty items. */
const SPLITTABLE = new Set([400, 413]);
const JSON_HEADERS = ['content-type', 'application/json; charset=UTF-8'];

export class UpstreamParts {
  private current: OpenPart | undefined;
  private readonly answers: PartAnswer[] = [];
  /** A part the engine refused as a whole: nothing more is sent, and later items join its list. */
  private refusedPart: PartAnswer | undefined;
  /** The client went away: nothing more is sent. */
  private aborted = false;
  /** Time spent waiting for the engine's answers, ms. */
  waitedMs = 0;
  /** Items in parts the engine has answered (applied, or failed one by one). */
  answeredItems = 0;

  constructor(
    private readonly upstream: Upstream,
    private readonly method: string,
    private readonly pathAndQuery: string,
    private readonly headers: readonly string[],
    private readonly maxBytes: number,
    /** Told how long each part took, or that the engine was busy (429). */
    private readonly limit?: InFlightLimit,
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
    if (!item) {
      part.hasRaw ||= chunks.some((chunk) => !isBlank(chunk));
      return;
    }
    part.written.push({ item, chunks });
    if (part.bytes >= this.maxBytes) await this.close();
  }

  /** Closes the last part and gives every answer; the last one's body not yet read. With `always`, sends an empty part if nothing was sent, for the engine's own answer. */
  async finish(always: boolean): Promise<PartAnswer[]> {
    if (this.aborted) throw new ClientGoneError();
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
    this.current = { request, response, bytes: 0, written: [], hasRaw: false };
    return this.current;
  }

  private async close(last = false): Promise<void> {
    const part = this.current as OpenPart;
    this.current = undefined;
    part.request.end();
    const waitStart = performance.now();
    const answer = await part.response;
    if (answer.status === 429) this.limit?.busy();
    else if (answer.status < 300) this.limit?.answered(performance.now() - waitStart, part.bytes);
    const items = part.written.map((w) => w.item);
    if (SPLITTABLE.has(answer.status) && part.written.length > 1 && !part.hasRaw) {
      await readBody(answer.body); // the refusal: its items are settled below
      const joined = await this.settle(part.written);
      this.answers.push({ status: 200, rawHeaders: JSON_HEADERS, body: bodyOf(JSON.stringify(joined)), items: [] });
      this.answeredItems += items.length;
    } else if (!last) {
      // Read now, so the next part can go: the bulk answer is small next to the body.
      const read: PartAnswer = { ...answer, body: bodyOf(await readBody(answer.body)), items: answer.status >= 300 ? items : [] };
      this.answers.push(read);
      if (answer.status >= 300) this.refusedPart = read;
      else this.answeredItems += items.length;
    } else this.answers.push({ ...answer, items });
    this.waitedMs += performance.now() - waitStart;
  }

  /** Sends `written` in halves until each request is applied or holds one item the engine refuses; their items, in order. */
  private async settle(written: Written[]): Promise<BulkAnswer> {
    const half = Math.ceil(written.length / 2);
    const answers: BulkAnswer[] = [];
    for (const group of [written.slice(0, half), written.slice(half)]) {
      const { status, text } = await this.sendWhole(group);
      if (status < 300) answers.push(JSON.parse(text) as BulkAnswer);
      else if (SPLITTABLE.has(status) && group.length > 1) answers.push(await this.settle(group));
      else answers.push(notAppliedAnswer(status, text, group.map((w) => w.item)));
    }
    return {
      took: answers.reduce((sum, a) => sum + (a.took ?? 0), 0),
      errors: answers.some((a) => a.errors !== false),
      items: answers.flatMap((a) => a.items ?? []),
    };
  }

  private async sendWhole(written: Written[]): Promise<{ status: number; text: string }> {
    const bytes = Buffer.concat(written.flatMap((w) => w.chunks));
    const answer = await this.upstream.send(this.method, this.pathAndQuery, this.headers, bytes).response;
    return { status: answer.status, text: (await readBody(answer.body)).toString('utf8') };
  }
}

function bodyOf(bytes: Buffer | string): PassThrough {
  const body = new PassThrough();
  body.end(bytes);
  return body;
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
