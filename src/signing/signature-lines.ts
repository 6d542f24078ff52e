// The output of `sign --jsonl`, written as UTF-8 bytes: each line the text of
// JSON.stringify({ id, ...signatureToJson(sig), params }), put together field by field into one growing
// buffer. Building the object, the array of MinHash values, a string per line and then encoding the
// batch cost about as much as the rest of signing a line.
import type { Signature } from '../signature.js';

export class SignatureLines {
  private buf = Buffer.allocUnsafe(1 << 16);
  private length = 0;
  /** `"condenser":…` and `"params":…` are the same on every line of a signer: encoded once. */
  private fixed?: { condenser: string; params: string; head: string; tail: string };

  /** One signature line; `id` undefined (or anything JSON has no value for) leaves the key out, as JSON.stringify does. */
  signature(sig: Signature, params: string, id?: unknown): void {
    const fixed = this.fixedParts(sig.condenser, params);
    const idJson = JSON.stringify(id);
    this.ascii('{');
    if (idJson !== undefined) this.text(`"id":${idJson},`);
    this.ascii(fixed.head);
    this.uint(sig.tokens);
    this.ascii(',"distinct_tokens":');
    this.uint(sig.distinct_tokens);
    this.ascii(',"sample":');
    this.plainStrings(sig.sample);
    this.ascii(',"minhash":[');
    this.uints(sig.minhash);
    this.ascii(`],"lsh":{"b":${sig.lsh.b},"r":${sig.lsh.r}},"bands":`);
    this.plainStrings(sig.bands);
    this.ascii(`,"simhash":"${sig.simhash}","simhash_blocks":`);
    this.plainStrings(sig.simhash_blocks);
    this.ascii(`,"content_hash":"${sig.content_hash}"`);
    this.ascii(fixed.tail);
  }

  /** Any JSON value as one line. */
  json(value: unknown): void {
    this.text(`${JSON.stringify(value)}\n`);
  }

  /** The lines so far, as bytes of their own (the buffer is reused). */
  bytes(): Uint8Array {
    return Uint8Array.prototype.slice.call(this.buf, 0, this.length);
  }

  private fixedParts(condenser: string, params: string) {
    if (this.fixed?.condenser !== condenser || this.fixed.params !== params) {
      this.fixed = { condenser, params, head: `"condenser":${JSON.stringify(condenser)},"tokens":`, tail: `,"params":${JSON.stringify(params)}}\n` };
    }
    return this.fixed;
  }

  private room(bytes: number): void {
    if (this.length + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.length + bytes));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }

  /** A string known to be ASCII. */
  private ascii(s: string): void {
    this.room(s.length);
    this.length += this.buf.write(s, this.length, 'latin1');
  }

  private text(s: string): void {
    this.room(3 * s.length);
    this.length += this.buf.write(s, this.length, 'utf8');
  }

  /** A JSON array of strings that need no escaping (hex and base64url keys and terms). */
  private plainStrings(values: string[]): void {
    this.ascii(values.length === 0 ? '[]' : `["${values.join('","')}"]`);
  }

  private uint(value: number): void {
    this.room(10);
    this.length = writeUint(this.buf, this.length, value);
  }

  /** Comma-separated, with no brackets. */
  private uints(values: Uint32Array): void {
    this.room(11 * values.length);
    let at = this.length;
    for (let i = 0; i < values.length; i++) {
      if (i > 0) this.buf[at++] = 0x2c;
      at = writeUint(this.buf, at, values[i]);
    }
    this.length = at;
  }
}

/** The decimal digits of a whole number below 2^32 at `at`; returns where they end. */
function writeUint(buf: Buffer, at: number, value: number): number {
  const digits =
    value < 1e5 ? (value < 10 ? 1 : value < 100 ? 2 : value < 1e3 ? 3 : value < 1e4 ? 4 : 5) : value < 1e6 ? 6 : value < 1e7 ? 7 : value < 1e8 ? 8 : value < 1e9 ? 9 : 10;
  const end = at + digits;
  let v = value;
  for (let i = end - 1; i >= at; i--) {
    const next = (v / 10) >>> 0;
    buf[i] = 0x30 + v - next * 10;
    v = next;
  }
  return end;
}
