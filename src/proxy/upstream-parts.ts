// One client request body sent upstream as one or more requests (parts) of about `maxBytes`, each started
// when the one before it has been answered, so the engine sees the items in order. Writes wait for the
// socket (back-pressure): memory holds the part in flight, never the whole body.
//
// A part the engine refuses as a whole for one of its items is sent again in halves, and so on, until only
// the items it refuses fail, each answered with the engine's error in its place: one bad document never
// costs the others. Which refusals those are is read from the engine's answer (itemRefusal): a 413 (the
// part too large: its halves are smaller), a 400 whose error is the validation of the items (an id over
// 512 bytes, an item without an index). Any other refusal is the request's own (an unknown query
// parameter, an action line the engine cannot parse, a body not ending with a newline) and goes back as
// the engine gave it; and when two halves of a split are refused alike before anything was applied, the
// refusal is taken as the request's too and splitting stops there. A part refused for load (429, 5xx), or
// as the request's, stops the sending; its items and those after it are kept (verb, index, id) so the
// client can be told which items were not applied (the parts before it were), and its bulk helper sends
// them again.
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';
import { ClientGoneError, readBody, type Upstream, type UpstreamRequest, type UpstreamResponse } from './forward.js';
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
  request: UpstreamRequest;
  response: Promise<UpstreamResponse>;
  bytes: number;
  written: Written[];
  /** Bytes that are not whole items (passed on unread): such a part is never split. */
  hasRaw: boolean;
}

/**
 * A refusal of a whole part for what one of its items holds, which splitting narrows down to that item: a
 * 413 (too large), or a 400 for the validation of the items (action_request_validation_exception: "id
 * [...] is too long", "index is missing"). Any other refusal is of the request itself.
 */
export function itemRefusal(status: number, text: string): boolean {
  if (status === 413) return true;
  if (status !== 400) return false;
  try {
    const error = (JSON.parse(text) as { error?: { type?: unknown } }).error;
    return typeof error === 'object' && error !== null && error.type === 'action_request_validation_exception';
  } catch {
    return false;
  }
}

/** Two refusals alike: the same status, error type and reason. */
function refusalKey(status: number, text: string): string {
  try {
    const error = (JSON.parse(text) as { error?: { type?: unknown; reason?: unknown } }).error;
    if (typeof error === 'object' && error !== null) return JSON.stringify([status, error.type, error.reason]);
  } catch {
    // not JSON: the text itself
  }
  return JSON.stringify([status, text]);
}

/** Splitting found the refusal to be the request's: nothing of the part was applied. */
class WholeRefusal extends Error {
  constructor() {
    super('refused as a whole');
  }
}
const JSON_HEADERS = ['content-type', 'application/json; charset=UTF-8'];

/**
 * One client body sent upstream in parts, each after the one before was answered, a refused part split until only the
 * refused items fail.
 */
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

  /** Sends the open part and waits for its answer (a large document in it is then done with, its memory free). */
  async flush(): Promise<void> {
    if (this.current && !this.aborted) await this.close();
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
    // A refusal is read to tell whose it is (its body is small).
    let refusal: Buffer | undefined;
    if ((answer.status === 400 || answer.status === 413) && part.written.length > 1 && !part.hasRaw) {
      refusal = await readBody(answer.body);
      if (itemRefusal(answer.status, refusal.toString('utf8'))) {
        const joined = await this.settle(part.written, { applied: false }).catch((err: unknown) => {
          if (err instanceof WholeRefusal) return undefined;
          throw err;
        });
        if (joined) {
          this.answers.push({ status: 200, rawHeaders: JSON_HEADERS, body: bodyOf(JSON.stringify(joined)), items: [] });
          this.answeredItems += items.length;
          this.waitedMs += performance.now() - waitStart;
          return;
        }
      }
    }
    if (!last || refusal) {
      // Read now, so the next part can go: the bulk answer is small next to the body.
      const read: PartAnswer = { ...answer, body: bodyOf(refusal ?? (await readBody(answer.body))), items: answer.status >= 300 ? items : [] };
      this.answers.push(read);
      if (answer.status >= 300) this.refusedPart = read;
      else this.answeredItems += items.length;
    } else this.answers.push({ ...answer, items });
    this.waitedMs += performance.now() - waitStart;
  }

  /**
   * Sends `written` in halves until each request is applied or holds one item the engine refuses; their
   * items, in order. Throws WholeRefusal when two halves are refused alike with nothing of the part
   * applied yet (`run.applied`): the refusal is the request's, not an item's.
   */
  private async settle(written: Written[], run: { applied: boolean }): Promise<BulkAnswer> {
    const half = Math.ceil(written.length / 2);
    const answers: BulkAnswer[] = [];
    let firstRefusal: string | undefined;
    for (const [i, group] of [written.slice(0, half), written.slice(half)].entries()) {
      const { status, text } = await this.sendWhole(group);
      if (status < 300) {
        run.applied = true;
        answers.push(JSON.parse(text) as BulkAnswer);
        continue;
      }
      const key = refusalKey(status, text);
      if (i === 0) firstRefusal = key;
      else if (status === 400 && !run.applied && key === firstRefusal) throw new WholeRefusal();
      if (group.length > 1 && itemRefusal(status, text)) answers.push(await this.settle(group, run));
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


function drained(request: UpstreamRequest): Promise<void> {
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
