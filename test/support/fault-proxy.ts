// A loopback HTTP proxy between near-dup and a real engine that injects the faults of a bad network:
// an error status instead of the engine's answer (429, 503), an answer dropped after the engine has
// acted on the request (the connection closed without a response), and an answer held back past the
// client's timeout; and a request held until the test releases it, so that something can happen at an exact
// point between two requests of a job. Each request is shown to `decide`, which says what happens to it;
// `injected` counts what was done.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  /** Path and query string, as the client sent them. */
  url: string;
  /** The path alone. */
  path: string;
  body: Buffer;
  /** 1 for the first request of this kind (see `kindOf`), 2 for the next, ... */
  nth: number;
  kind: RequestKind;
}

export type RequestKind = 'bulk' | 'scroll' | 'search' | 'pit' | 'mget' | 'count' | 'other';

/**
 * pass: forward; status: answer this without forwarding; drop: forward, then close without answering; stall:
 * forward, answer after ms; holdUntil: forward only once the promise settles (the engine has not seen it until then).
 */
export type Fault = 'pass' | { status: number } | 'drop' | { stallMs: number } | { holdUntil: Promise<unknown> };

export interface FaultCounts {
  status429: number;
  status503: number;
  dropped: number;
  stalled: number;
  held: number;
  passed: number;
}

export function kindOf(method: string, path: string): RequestKind {
  if (/\/_bulk$/.test(path)) return 'bulk';
  if (/\/_search\/scroll$/.test(path) && method !== 'DELETE') return 'scroll';
  if (/\/(_pit|_search\/point_in_time)$/.test(path)) return 'pit';
  if (/\/_search$/.test(path)) return 'search';
  if (/\/_mget$/.test(path)) return 'mget';
  if (/\/_count$/.test(path)) return 'count';
  return 'other';
}

export class FaultProxy {
  readonly injected: FaultCounts = { status429: 0, status503: 0, dropped: 0, stalled: 0, held: 0, passed: 0 };
  decide: (request: ProxiedRequest) => Fault = () => 'pass';
  private readonly seen = new Map<RequestKind, number>();
  private server?: http.Server;

  constructor(private readonly upstream: string) {}

  /** Starts listening on a free loopback port; resolves to the proxy's URL. */
  async start(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Back to passing everything, with the request counts (for `nth`) and the tallies at zero. */
  reset(): void {
    this.decide = () => 'pass';
    this.seen.clear();
    for (const key of Object.keys(this.injected) as Array<keyof FaultCounts>) this.injected[key] = 0;
  }

  get total(): number {
    return this.injected.status429 + this.injected.status503 + this.injected.dropped + this.injected.stalled;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = req.url ?? '/';
    const path = url.split('?')[0];
    const kind = kindOf(req.method ?? 'GET', path);
    const nth = (this.seen.get(kind) ?? 0) + 1;
    this.seen.set(kind, nth);
    const fault = this.decide({ method: req.method ?? 'GET', url, path, body, nth, kind });
    if (typeof fault === 'object' && 'status' in fault) {
      if (fault.status === 429) this.injected.status429++;
      else this.injected.status503++;
      const error = { error: { type: fault.status === 429 ? 'es_rejected_execution_exception' : 'unavailable', reason: 'injected by the test proxy' }, status: fault.status };
      res.writeHead(fault.status, { 'content-type': 'application/json' }).end(JSON.stringify(error));
      return;
    }
    if (typeof fault === 'object' && 'holdUntil' in fault) {
      this.injected.held++;
      await fault.holdUntil.catch(() => undefined);
    }
    let answer: { status: number; headers: http.IncomingHttpHeaders; body: Buffer };
    try {
      answer = await this.forward(req, body);
    } catch {
      req.socket.destroy();
      return;
    }
    if (fault === 'drop') {
      this.injected.dropped++;
      req.socket.destroy(); // the engine has acted; the client never hears of it
      return;
    }
    if (typeof fault === 'object' && 'stallMs' in fault) {
      this.injected.stalled++;
      await new Promise((resolve) => setTimeout(resolve, fault.stallMs));
      if (req.socket.destroyed) return;
    } else this.injected.passed++;
    const headers = { ...answer.headers };
    delete headers['transfer-encoding'];
    headers['content-length'] = String(answer.body.length);
    res.writeHead(answer.status, headers).end(answer.body);
  }

  private forward(req: http.IncomingMessage, body: Buffer): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    const target = new URL(req.url ?? '/', this.upstream);
    const headers = { ...req.headers, host: target.host, 'content-length': String(body.length) };
    delete headers['transfer-encoding'];
    return new Promise((resolve, reject) => {
      const out = http.request(target, { method: req.method, headers }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(parts) }));
        answer.on('error', reject);
      });
      out.on('error', reject);
      out.end(body);
    });
  }
}
