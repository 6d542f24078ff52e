// How long the proxy waits for a request's body: in all (--body-timeout) and for any one of its bytes
// (--body-idle-timeout), as every reverse proxy bounds it, so a client sending a byte a second cannot hold a
// write slot (or a connection to the cluster) for long. Only the time the proxy spends waiting for the
// client counts: while it holds the client back itself (the body paused: signing, a cluster slow to take
// the body, room for large documents), the clock stops, so a large body through a busy cluster is not cut.
import type { Readable } from 'node:stream';
import { PROXY_ERROR, ProxyRefusal } from './refusal.js';

/** How long the proxy waits for a request's body, in all and for any one byte. */
export interface BodyTimeouts {
  /** The time spent waiting for the body's bytes, in all. */
  totalMs: number;
  /** The longest wait for the next byte. */
  idleMs: number;
}

/** A body that did not come in time: 408, as the engines and reverse proxies answer it. */
export class BodyTimeoutError extends ProxyRefusal {
  constructor(reason: string) {
    super(408, PROXY_ERROR, reason);
  }
}

/**
 * Watches `req` from now (call it once the body is being read, piped on) until its end, and calls `onTimeout`
 * once if a limit is passed. Gives the function that stops watching.
 */
export function watchBody(req: Readable, limits: BodyTimeouts, onTimeout: (err: BodyTimeoutError) => void): () => void {
  if (req.readableEnded) return () => undefined;
  let waited = 0;
  /** When the current wait began (undefined: the body is paused by the proxy). */
  let since: number | undefined;
  let lastByte = 0;
  let received = 0;
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    if (since === undefined) return;
    // Every byte has come: what is left is the proxy's own reading.
    if ((req as { complete?: boolean }).complete) return stop();
    const now = Date.now();
    const total = waited + now - since;
    if (total >= limits.totalMs) return fire(`the request body did not come in time: ${seconds(limits.totalMs)} spent waiting for its bytes (--body-timeout), ${received} bytes came`);
    if (now - lastByte >= limits.idleMs) return fire(`no byte of the request body came for ${seconds(limits.idleMs)} (--body-idle-timeout), after ${received} bytes`);
    timer = setTimeout(check, Math.min(limits.totalMs - total, limits.idleMs - (now - lastByte)));
  };
  const resume = () => {
    if (since !== undefined) return;
    since = Date.now();
    lastByte = since;
    check();
  };
  const pause = () => {
    if (since === undefined) return;
    waited += Date.now() - since;
    since = undefined;
    clearTimeout(timer);
  };
  const data = (chunk: Buffer) => {
    received += chunk.length;
    lastByte = Date.now();
  };
  const stop = () => {
    pause();
    req.off('resume', resume).off('pause', pause).off('data', data).off('end', stop).off('close', stop);
  };
  const fire = (reason: string) => {
    stop();
    onTimeout(new BodyTimeoutError(`near-dup proxy: ${reason}; send the body faster, or raise the limit`));
  };
  req.on('resume', resume).on('pause', pause).on('data', data).once('end', stop).once('close', stop);
  if (req.readableFlowing) resume();
  return stop;
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}
