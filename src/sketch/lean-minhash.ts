// datasketch's LeanMinHash byte format, so signatures can move between Python pipelines and the index.
//   legacy:   seed int64 | num_perm int32 | num_perm x uint32
//   affine32: seed int64 | -num_perm int32 | scheme code uint8 (1) | [padding to 4 with native '@'] | uint32 values
// We write the layout of `serialize(buf)` with Python's default '@' byte order on a little-endian
// machine (aligned), and read '@', '<' and '>' buffers alike.
import type { MinhashScheme } from './minhash.js';

const SCHEME_CODES: Record<number, MinhashScheme> = { 1: 'affine32' };

/** A MinHash as datasketch's LeanMinHash holds it: the seed, the scheme and the values, what its bytes carry. */
export interface LeanMinhash {
  seed: number;
  scheme: MinhashScheme;
  values: Uint32Array;
}

/** A MinHash in datasketch's LeanMinHash byte format (the layout above): the bytes of the stored `minhash` field. */
export function serializeLeanMinhash({ seed, scheme, values }: LeanMinhash): Uint8Array {
  const header = scheme === 'legacy' ? 12 : 16;
  const buf = new Uint8Array(header + 4 * values.length);
  const view = new DataView(buf.buffer);
  view.setBigInt64(0, BigInt(seed), true);
  view.setInt32(8, scheme === 'legacy' ? values.length : -values.length, true);
  if (scheme !== 'legacy') view.setUint8(12, 1);
  for (let i = 0; i < values.length; i++) view.setUint32(header + 4 * i, values[i], true);
  return buf;
}

/** Reads a LeanMinHash buffer in any of the byte orders and layouts datasketch writes. */
export function deserializeLeanMinhash(bytes: Uint8Array): LeanMinhash {
  const { seed, scheme, header, n, littleEndian } = layoutOf(bytes);
  return { seed, scheme, values: readValues(bytes, header, n, littleEndian, new Uint32Array(n)) };
}

interface Layout {
  seed: number;
  scheme: MinhashScheme;
  /** Bytes before the first value. */
  header: number;
  n: number;
  littleEndian: boolean;
}

function layoutOf(bytes: Uint8Array): Layout {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 12) {
    for (const littleEndian of [true, false]) {
      const n = view.getInt32(8, littleEndian);
      const seed = Number(view.getBigInt64(0, littleEndian));
      if (n >= 0 && bytes.length === 12 + 4 * n) return { seed, scheme: 'legacy', header: 12, n, littleEndian };
      const scheme = bytes.length > 12 ? SCHEME_CODES[view.getUint8(12)] : undefined;
      if (n < 0 && scheme) {
        // 13 with an explicit byte order ('<', '>'), 16 with native alignment ('@').
        for (const header of [13, 16]) {
          if (bytes.length === header + 4 * -n) return { seed, scheme, header, n: -n, littleEndian };
        }
      }
    }
  }
  throw new RangeError(
    `not a datasketch LeanMinHash buffer (${bytes.length} bytes): its num_perm field matches neither its length ` +
      'nor a known layout. Serialize with LeanMinHash(m).serialize(buf) from datasketch (legacy or affine32 scheme).',
  );
}

function readValues(bytes: Uint8Array, offset: number, n: number, littleEndian: boolean, into: Uint32Array): Uint32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < n; i++) into[i] = view.getUint32(offset + 4 * i, littleEndian);
  return into;
}

/** The bytes of one stored signature while it is decoded (grown when a longer one comes). */
let scratch = Buffer.alloc(4096);
let scratchValues = new Uint32Array(1024);

/**
 * The MinHash values of a stored signature (a base64 LeanMinHash buffer), decoded without allocating: a
 * view of a buffer that the next call overwrites, for a reader that copies them at once.
 */
export function minhashValuesScratch(base64: string): Uint32Array {
  if (base64.length > scratch.length) scratch = Buffer.alloc(base64.length);
  const bytes = scratch.subarray(0, scratch.write(base64, 'base64'));
  const { header, n, littleEndian } = layoutOf(bytes);
  if (n > scratchValues.length) scratchValues = new Uint32Array(n);
  return readValues(bytes, header, n, littleEndian, scratchValues).subarray(0, n);
}

/** The MinHash values of a stored signature (a base64 LeanMinHash buffer, as near-dup writes it). */
export function minhashValues(base64: string): Uint32Array {
  return deserializeLeanMinhash(Buffer.from(base64, 'base64')).values;
}
