// bench:annotate — annotate end to end against the engine's own rate for the same bulk partial updates.
//   npm run bench:annotate [-- --docs 200000 --max-chars 2000]
// Builds an index of the PEP corpus replicated with small random edits (each copy of a revision gets a
// few words replaced, dropped or inserted) up to --docs documents, texts cut at --max-chars so that the
// index fits the embedded engine's heap; then in one run measures
//   (a) `near-dup annotate` (a child process, as a user runs it): docs/s and its peak memory;
//   (b) the engine alone: the same bulk partial updates (same fields, same bulk size and concurrency),
//       with the signatures computed beforehand, sent as fast as the engine takes them.
// Each run starts from the same state: the index loaded afresh and force-merged (loadIndex).
import { execFileSync, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import PQueue from 'p-queue';
import { nearDupFields } from '../../dist/annotation.js';
import { connect } from '../../dist/engine/client.js';
import { initIndex } from '../../dist/indices/init.js';
import { createSigner } from '../../dist/signature.js';
import { benchUrl, loadIndex, numberArg, pinApart, replicatedDocs } from './replicated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const target = numberArg('docs', 200_000);
const maxChars = numberArg('max-chars', 2000);
const index = 'near-dup-bench-annotate';

const client = await connect({ url: benchUrl(execFileSync, path.join(here, '../engine/cli.mjs')) });
console.log(`engine: ${client.info.flavour} ${client.info.version} at ${client.url}; ${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}`);
const docs = await replicatedDocs(target, maxChars);
const made = docs.length;
// Both runs start from an index with the near-dup fields mapped (annotate would map them itself; the engine
// alone must have the same mapping, or it would be measured against dynamic mapping).
const prepare = () => initIndex(client, index, 'near_dup');
const pinned = await pinApart(client, execFileSync);
console.log(pinned.description);
const indexSeconds = await loadIndex(client, index, docs, { prepare });
console.log(`indexed ${made} documents (texts cut at ${maxChars} chars) in ${indexSeconds.toFixed(1)} s`);

// (a) near-dup annotate, end to end, as a user runs it.
const cli = path.join(here, '../../dist/cli/main.js');
let t0 = performance.now();
const summary = await new Promise((resolve, reject) => {
  const command = pinned.childCores ? ['taskset', ['-c', pinned.childCores, process.execPath]] : [process.execPath, []];
  const child = spawn(command[0], [...command[1], cli, 'annotate', '--url', client.url, '--index', index, '--field', 'text', '--checkpoint', path.join(os.tmpdir(), 'near-dup-bench-cp.json')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`annotate exited with ${code}`))));
});
const annotateSeconds = (performance.now() - t0) / 1000;
// The engine alone gets as many requests in flight as annotate chose ("4 (1 data node with ...)").
const inFlight = Number.parseInt(summary.inFlight, 10);

// (b) the engine alone: the same partial updates, signatures computed beforehand.
const signer = createSigner();
const now = new Date();
const bodies = [];
let batch = [];
for (const { id, text } of docs) {
  batch.push(JSON.stringify({ update: { _index: index, _id: id } }), JSON.stringify({ doc: { near_dup: nearDupFields(signer(text), signer.settings, now, 'joined') } }));
  if (batch.length >= 2000) {
    bodies.push(batch.join('\n') + '\n');
    batch = [];
  }
}
if (batch.length) bodies.push(batch.join('\n') + '\n');
// The same starting point as (a): the documents freshly loaded and merged, without near-dup fields.
await loadIndex(client, index, docs, { prepare });
const engineQueue = new PQueue({ concurrency: inFlight });
t0 = performance.now();
for (const body of bodies) {
  await engineQueue.onSizeLessThan(inFlight);
  engineQueue.add(async () => {
    const r = await client.bulkNdjson(body);
    if (r.errors) throw new Error('update failed');
  });
}
await engineQueue.onIdle();
await client.refresh(index);
const engineSeconds = (performance.now() - t0) / 1000;

const annotateRate = made / annotateSeconds;
const engineRate = made / engineSeconds;
console.log(`(a) near-dup annotate, end to end     ${annotateSeconds.toFixed(1).padStart(7)} s ${annotateRate.toFixed(0).padStart(7)} docs/s   peak memory ${summary.peakMemoryMb} MB (annotated ${summary.annotated}, failed ${summary.failed})`);
console.log(`(b) engine alone, same bulk updates   ${engineSeconds.toFixed(1).padStart(7)} s ${engineRate.toFixed(0).padStart(7)} docs/s   (${inFlight} in flight, as annotate chose: ${summary.inFlight})`);
console.log(`ratio annotate / engine: ${(annotateRate / engineRate).toFixed(2)} (goal >= 0.8); annotator peak memory ${summary.peakMemoryMb} MB (goal < 512 MB)`);
await client.deleteIndex(index, { ignoreMissing: true });
pinned.restore();
await client.close();
