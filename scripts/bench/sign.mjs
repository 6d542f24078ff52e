// bench:sign — signatures (default condenser: MinHash + LSH bands + SimHash) for every document of the
// corpus, against datasketch MinHash.update_batch on the same tokens, measured in the same run.
//   npm run bench:sign [-- --corpus FILE]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createSigner } from '../../dist/signature.js';
import { DistinctUint32 } from '../../dist/sketch/distinct.js';
import { emptyMinhash, minhashPermutations, updateMinhash } from '../../dist/sketch/minhash.js';
import { byteHash, CachedByteHash } from '../../dist/sketch/token-hash.js';
import { layoutWords, TokenRanges } from '../../dist/text/token-ranges.js';
import { normalizer } from '../../dist/text/normalize.js';
import { signStream } from '../../dist/signing/sign-stream.js';
import { loadCorpus, mb, shuffled } from './corpus.mjs';
import { pythonPeer } from './python-peer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const corpusArg = process.argv.indexOf('--corpus');
const docs = shuffled(await loadCorpus(corpusArg > 0 ? process.argv[corpusArg + 1] : undefined));
const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d.text), 0);
console.log(`corpus: ${docs.length} documents, ${mb(bytes).toFixed(1)} MB; ${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}`);

// The peer sees the same tokens: our normalized text, split on white space.
const normalize = normalizer('norm-html');
const dir = mkdtempSync(path.join(os.tmpdir(), 'near-dup-bench-'));
const tokensFile = path.join(dir, 'normalized.jsonl');
const normalized = docs.map((d) => normalize(d.text));
writeFileSync(tokensFile, normalized.map((text) => JSON.stringify({ text })).join('\n') + '\n');

// Like for like: only the MinHash of the same tokens (no normalizing, no SimHash), as the peer does.
const perms = minhashPermutations(128, 1);
const cache = new CachedByteHash(byteHash('sha1'));
const words = new TokenRanges();
const distinct = new DistinctUint32();
let checksum = 0;
const minhashOnly = () => {
  const t0 = performance.now();
  checksum = 0;
  for (const text of normalized) {
    layoutWords(text, words);
    distinct.clear(words.count);
    for (let i = 0; i < words.count; i++) distinct.add(cache.get(words.source, words.starts[i], words.ends[i]));
    const values = emptyMinhash(128);
    updateMinhash(values, perms, distinct.values, distinct.size);
    checksum ^= values[0];
  }
  return (performance.now() - t0) / 1000;
};
minhashOnly();
const minhashSeconds = Math.min(minhashOnly(), minhashOnly());

// near-dup, one thread (best of 2, after a warm-up pass over a tenth of the corpus).
const sign = createSigner();
for (const d of docs.slice(0, docs.length / 10)) sign(d.text);
let single = Infinity;
for (let round = 0; round < 2; round++) {
  const t0 = performance.now();
  for (const d of docs) sign(d.text);
  single = Math.min(single, (performance.now() - t0) / 1000);
}
const rssSingle = process.memoryUsage.rss() / 1e6;

// near-dup batch mode, through the same path as `near-dup sign --jsonl` (JSON lines in and out, worker
// threads started cold), on one worker thread and on every core.
const lines = docs.map((d) => Buffer.from(JSON.stringify({ id: d.id, text: d.text }) + '\n'));
const batchRun = async (threads) => {
  const sink = new Writable({ write(_chunk, _enc, cb) { cb(); } });
  return signStream(Readable.from(lines), sink, { signer: {}, fields: { textField: 'text', idField: 'id' }, threads });
};
const batch1 = await batchRun(1);
const batch = await batchRun(os.availableParallelism());

// datasketch.
const python = pythonPeer();
const peer = JSON.parse(execFileSync(python, [path.join(here, 'datasketch_peer.py'), tokensFile, '128'], { encoding: 'utf8' }));
rmSync(dir, { recursive: true, force: true });
const peakMb = process.resourceUsage().maxRSS / 1024;

const row = (name, seconds) =>
  `${name.padEnd(42)} ${seconds.toFixed(2).padStart(7)} s ${(docs.length / seconds).toFixed(0).padStart(7)} docs/s ${(mb(bytes) / seconds).toFixed(1).padStart(6)} MB/s`;
console.log(row('datasketch MinHash.update_batch (1 core)', peer.seconds) + `   peak ${peer.peak_mb.toFixed(0)} MB`);
console.log(row('near-dup MinHash only, same tokens (1 thread)', minhashSeconds) + `   ratio ${(peer.seconds / minhashSeconds).toFixed(2)}x`);
console.log(row('near-dup sign, MinHash+SimHash (1 thread)', single) + `   ratio ${(peer.seconds / single).toFixed(2)}x`);
console.log(row('near-dup sign --jsonl (1 worker thread)', batch1.seconds) + `   ratio ${(peer.seconds / batch1.seconds).toFixed(2)}x`);
console.log(
  row(`near-dup sign --jsonl (${os.availableParallelism()} worker threads)`, batch.seconds) +
    `   ratio ${(peer.seconds / batch.seconds).toFixed(2)}x, ${(batch1.seconds / batch.seconds).toFixed(2)}x one worker`,
);
console.log(`near-dup peak memory (main process, RSS): ${peakMb.toFixed(0)} MB (after single-thread pass: ${rssSingle.toFixed(0)} MB); datasketch ${peer.datasketch}`);
console.log(`MinHash checksum ${checksum >>> 0} vs datasketch ${peer.checksum}: ${checksum >>> 0 === peer.checksum ? 'identical' : 'DIFFERENT'}`);
if ((checksum >>> 0) !== peer.checksum) throw new Error('MinHash values differ from datasketch');
if (batch.failed + batch1.failed > 0) throw new Error(`${batch.failed} documents failed in batch mode`);
