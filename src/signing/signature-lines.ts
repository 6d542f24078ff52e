// The output of `sign --jsonl`, written as UTF-8 bytes: each line the text of
// JSON.stringify({ id, ...signatureToJson(sig), params }), put together field by field into one growing
// buffer. Building the object, the array of MinHash values, a string per line and then encoding the
// batch cost about as much as the rest of signing a line. From a signature's parts (SignatureParts) no
// string is made at all: band keys, sample terms, SimHash block keys and the MinHash values are written
// from their numbers; on ~2 KB texts the strings and objects of a Signature and their writing cost
// about a fifth of signing one.
import { encodeCore } from '../sketch/core-similarity.js';
import type { Signature, SignatureParts, SignerSettings } from '../signature.js';
import { hashOfRank } from '../sketch/containment.js';
import { blockWidths, simhashHex } from '../sketch/simhash.js';
import { simhashBase32 } from '../sketch/simhash-doc.js';

const HEX = Buffer.from('0123456789abcdef', 'latin1');
const B64URL = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1');

/** `sign --jsonl`'s output lines, written straight into one growing UTF-8 buffer (the file header says why). */
export class SignatureLines {
  private buf = Buffer.allocUnsafe(1 << 16);
  private length = 0;
  /** `"condenser":…` and `"params":…` are the same on every line of a signer: encoded once. */
  private fixed?: { condenser: string; params: string; head: string; tail: string };
  /** The same for lines written from parts, with the bit widths of the signer's SimHash blocks. */
  private fixedOfSettings?: { settings: SignerSettings; head: string; lsh: string; tail: string; widths: Int32Array };

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
    if (sig.core !== undefined) this.ascii(`,"core":"${sig.core}"`);
    this.ascii(fixed.tail);
  }

  /**
   * The line of a signature's parts: the same bytes as signature() of the Signature that the signer of
   * `settings` makes of them (test/unit/sign-speed.test.ts holds the two to it).
   */
  parts(p: SignatureParts, settings: SignerSettings, id?: unknown): void {
    const fixed = this.fixedOf(settings);
    const idJson = JSON.stringify(id);
    this.ascii('{');
    if (idJson !== undefined) this.text(`"id":${idJson},`);
    this.ascii(fixed.head);
    this.uint(p.tokens);
    this.ascii(',"distinct_tokens":');
    this.uint(p.distinct);
    this.ascii(',"sample":[');
    this.sampleTerms(p, settings.keyEncoding);
    this.ascii('],"minhash":[');
    this.uints(p.minhash);
    this.ascii(fixed.lsh);
    this.bandKeys(p.bandDigests, settings.keyEncoding);
    this.ascii('],"simhash":"');
    this.ascii(settings.simhash === 'simhash-doc' ? simhashBase32(p.fingerprint) : simhashHex(p.fingerprint));
    this.ascii('","simhash_blocks":[');
    if (p.tokens > 0 && p.words > 0) this.blockKeys(p.fingerprint.hi, p.fingerprint.lo, fixed.widths);
    this.ascii('],"content_hash":"');
    this.ascii(p.content_hash);
    // (The tail opens with the quote that closes the last string.)
    if (p.core !== undefined) this.ascii(`","core":"${encodeCore(p.core)}`);
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

  private fixedOf(settings: SignerSettings) {
    if (this.fixedOfSettings?.settings !== settings) {
      this.fixedOfSettings = {
        settings,
        head: `"condenser":${JSON.stringify(settings.condenser)},"tokens":`,
        lsh: `],"lsh":{"b":${settings.lsh.b},"r":${settings.lsh.r}},"bands":[`,
        tail: `","params":${JSON.stringify(settings.params)}}\n`,
        widths: Int32Array.from(blockWidths(settings.simhashBlocks)),
      };
    }
    return this.fixedOfSettings;
  }

  /** The sample's terms (containment.ts sampleTerm of each rank's hash), quoted, comma-separated. */
  private sampleTerms(p: SignatureParts, encoding: 1 | 2): void {
    const { values, count } = p.sample;
    this.room(11 * count);
    const buf = this.buf;
    let at = this.length;
    for (let k = 0; k < count; k++) {
      if (k > 0) buf[at++] = 0x2c;
      buf[at++] = 0x22;
      const hash = hashOfRank(values[k]);
      at = encoding === 1 ? writeHex32(buf, at, hash) : writeBase64url24(buf, at, hash >>> 8);
      buf[at++] = 0x22;
    }
    this.length = at;
  }

  /** lsh.ts bandKeysOfDigests, quoted, comma-separated: "<band>:<16 hex digits or 8 base64url characters>". */
  private bandKeys(digests: Uint32Array, encoding: 1 | 2): void {
    const bands = digests.length >> 1;
    this.room(24 * bands);
    const buf = this.buf;
    let at = this.length;
    for (let band = 0; band < bands; band++) {
      if (band > 0) buf[at++] = 0x2c;
      buf[at++] = 0x22;
      at = writeUint(buf, at, band);
      buf[at++] = 0x3a;
      const hi = digests[2 * band], lo = digests[2 * band + 1];
      if (encoding === 1) at = writeHex32(buf, writeHex32(buf, at, hi), lo);
      else at = writeBase64url24(buf, writeBase64url24(buf, at, hi >>> 8), ((hi & 0xff) << 16) | (lo >>> 16));
      buf[at++] = 0x22;
    }
    this.length = at;
  }

  /**
   * simhash.ts simhashBlockKeys of (hi, lo), quoted, comma-separated: "<block>:<hex of the block's bits>",
   * most significant block first, no leading zeros.
   */
  private blockKeys(hi: number, lo: number, widths: Int32Array): void {
    this.room(16 * widths.length);
    const buf = this.buf;
    let at = this.length;
    let shift = 64;
    for (let index = 0; index < widths.length; index++) {
      const width = widths[index];
      shift -= width;
      // Bits [shift, shift + width) of hi:lo; a block is at most 32 bits wide.
      let bits: number;
      if (shift >= 32) bits = hi >>> (shift - 32);
      else if (shift === 0) bits = lo;
      else bits = (hi << (32 - shift)) | (lo >>> shift);
      if (width < 32) bits &= (1 << width) - 1;
      if (index > 0) buf[at++] = 0x2c;
      buf[at++] = 0x22;
      at = writeUint(buf, at, index);
      buf[at++] = 0x3a;
      at = writeHex(buf, at, bits >>> 0);
      buf[at++] = 0x22;
    }
    this.length = at;
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

/** 8 lowercase hex digits of a uint32 at `at`; returns where they end. */
function writeHex32(buf: Buffer, at: number, value: number): number {
  for (let i = 7; i >= 0; i--) {
    buf[at + i] = HEX[value & 15];
    value >>>= 4;
  }
  return at + 8;
}

/** The lowercase hex digits of a uint32, without leading zeros ("0" for zero), at `at`. */
function writeHex(buf: Buffer, at: number, value: number): number {
  let digits = 1;
  while (digits < 8 && value >>> (4 * digits) !== 0) digits++;
  for (let i = digits - 1; i >= 0; i--) {
    buf[at + i] = HEX[value & 15];
    value >>>= 4;
  }
  return at + digits;
}

/** 24 bits as 4 base64url characters (lsh.ts base64url24) at `at`. */
function writeBase64url24(buf: Buffer, at: number, v: number): number {
  buf[at] = B64URL[(v >>> 18) & 63];
  buf[at + 1] = B64URL[(v >>> 12) & 63];
  buf[at + 2] = B64URL[(v >>> 6) & 63];
  buf[at + 3] = B64URL[v & 63];
  return at + 4;
}
