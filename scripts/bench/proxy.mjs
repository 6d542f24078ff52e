// bench:proxy — bulk indexing through `near-dup proxy` (signing included) against bulk indexing straight
// to the engine, in one run.
//   npm run bench:proxy [-- --docs 200000 --max-chars 2000 --concurrency 2 --bulk 1000]
// The same documents (the PEP corpus replicated with small random edits, as the other benchmarks), the same
// bulk requests (--bulk documents each, --concurrency in flight), into a new index with the same settings
// each time: (a) to the engine, (b) to a proxy started as a user starts it (a child process). Prints
// documents per second of each, the ratio, the proxy's peak memory and the latency it says it added; and
// (c) the engine taking the same documents already signed (signatures computed beforehand): what the
// signature fields cost the engine itself, the bound any signing path has on this machine.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import PQueue from 'p-queue';
import { nearDupFields } from '../../dist/annotation.js';
import { connect } from '../../dist/engine/client.js';
import { createIndexBody } from '../../dist/indices/mapping.js';
import { createSigner } from '../../dist/signature.js';
import { benchUrl, numberArg, pinApart, replicatedDocs } from './replicated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const target = numberArg('docs', 200_000);
const maxChars = numberArg('max-chars', 2000);
const concurrency = numberArg('concurrency', 2);
const perBulk = numberArg('bulk', 1000);
const index = 'near-dup-bench-proxy';

const client = await connect({ url: benchUrl(execFileSync, path.join(here, '../engine/cli.mjs')) });
console.log(`engine: ${client.info.flavour} ${client.info.version} at ${client.url}; ${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}`);
// The engine on a core of its own, the proxy and this client on the other(s): as on separate machines.
const cores = os.availableParallelism();
const pinned = await pinApart(client, execFileSync);
console.log(pinned.description);
const docs = await replicatedDocs(target, maxChars);
const bodies = [];
for (let i = 0; i < docs.length; i += perBulk) {
  bodies.push(docs.slice(i, i + perBulk).flatMap((d) => [JSON.stringify({ index: { _index: index, _id: d.id } }), JSON.stringify(d)]).join('\n') + '\n');
}
const megabytes = bodies.reduce((sum, b) => sum + Buffer.byteLength(b), 0) / 1048576;
console.log(`${docs.length} documents (texts cut at ${maxChars} chars), ${bodies.length} bulk requests of ${perBulk}, ${megabytes.toFixed(0)} MB, ${concurrency} in flight`);

/** The engine's CPU seconds so far (its own process counter). */
async function engineCpuSeconds() {
  const stats = await client.request('GET', '/_nodes/_local/stats/process');
  return Object.values(stats.nodes)[0].process.cpu.total_in_millis / 1000;
}

const cpu = { engine: {}, proxy: 0 };

/** Sends every body to `url` as a client would (fetch), `concurrency` at a time; seconds taken. */
async function bulkTo(url, bodies, mappings, label) {
  await client.deleteIndex(index, { ignoreMissing: true });
  await client.createIndex(index, { settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '30s' }, ...mappings });
  const queue = new PQueue({ concurrency });
  const cpu0 = await engineCpuSeconds();
  const t0 = performance.now();
  for (const body of bodies) {
    await queue.onSizeLessThan(concurrency);
    queue.add(async () => {
      const res = await fetch(`${url}/_bulk`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body });
      const answer = await res.json();
      if (res.status !== 200 || answer.errors) throw new Error(`bulk failed: ${res.status} ${JSON.stringify(answer).slice(0, 300)}`);
    });
  }
  await queue.onIdle();
  await client.refresh(index);
  const seconds = (performance.now() - t0) / 1000;
  cpu.engine[label] = (await engineCpuSeconds()) - cpu0;
  if ((await client.count(index)) !== docs.length) throw new Error('documents missing');
  return seconds;
}

function startProxyProcess() {
  const cli = path.join(here, '../../dist/cli/main.js');
  const [command, prefix] = pinned.childCores ? ['taskset', ['-c', pinned.childCores, process.execPath]] : [process.execPath, []];
  const child = spawn(command, [...prefix, cli, 'proxy', '--url', client.url, '--listen', '127.0.0.1:0', '--index', index, '--field', 'text'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  const url = new Promise((resolve, reject) => {
    child.stderr.on('data', (b) => {
      const found = /listening on (\S+),/.exec(b.toString());
      if (found) resolve(found[1]);
    });
    child.on('close', (code) => reject(new Error(`the proxy exited with ${code}`)));
  });
  const cpuSeconds = () => {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  };
  const peakMb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
  const stop = () =>
    new Promise((resolve) => {
      child.on('close', () => resolve(JSON.parse(out.trim().split('\n').pop())));
      child.kill('SIGTERM');
    });
  return { url, peakMb, cpuSeconds, stop };
}

const directSeconds = await bulkTo(client.url, bodies, {}, 'direct');
const proxy = startProxyProcess();
const proxySeconds = await bulkTo(await proxy.url, bodies, {}, 'proxy');
const peak = proxy.peakMb();
cpu.proxy = proxy.cpuSeconds();
const stats = await proxy.stop();
const sample = (await client.search(index, { size: 1, query: { match_all: {} } })).hits.hits[0]._source;
if (!sample.near_dup?.simhash) throw new Error('documents indexed through the proxy have no signature');

const signer = createSigner();
const now = new Date();
const signedBodies = [];
for (let i = 0; i < docs.length; i += perBulk) {
  signedBodies.push(
    docs
      .slice(i, i + perBulk)
      .flatMap((d) => [JSON.stringify({ index: { _index: index, _id: d.id } }), JSON.stringify({ ...d, near_dup: nearDupFields(signer(d.text), signer.settings, now, 'joined') })])
      .join('\n') + '\n',
  );
}
const signedSeconds = await bulkTo(client.url, signedBodies, createIndexBody(), 'signed');

const direct = docs.length / directSeconds;
const through = docs.length / proxySeconds;
console.log(`(a) bulk straight to the engine        ${directSeconds.toFixed(1).padStart(7)} s ${direct.toFixed(0).padStart(7)} docs/s`);
console.log(`(b) bulk through near-dup proxy        ${proxySeconds.toFixed(1).padStart(7)} s ${through.toFixed(0).padStart(7)} docs/s   signed ${stats.documents.signed}, proxy peak memory ${peak.toFixed(0)} MB, latency added p50 ${stats.latency_added_ms.p50} ms p99 ${stats.latency_added_ms.p99} ms`);
console.log(`(c) engine alone, documents pre-signed ${signedSeconds.toFixed(1).padStart(7)} s ${(docs.length / signedSeconds).toFixed(0).padStart(7)} docs/s`);
console.log(
  `where the time goes (CPU seconds; ${pinned.childCores ? `the engine on 1 of ${cores} cores, the proxy and this client on the other${cores > 2 ? 's' : ''}` : `${cores} cores shared by the engine, the proxy and this client`}): ` +
    `engine ${cpu.engine.direct.toFixed(1)} in (a), ${cpu.engine.proxy.toFixed(1)} in (b), ${cpu.engine.signed.toFixed(1)} in (c); proxy ${cpu.proxy.toFixed(1)} in (b)`,
);
console.log(`ratio proxy / direct: ${(through / direct).toFixed(2)} (goal >= 0.8); proxy / engine with pre-signed documents: ${(through / (docs.length / signedSeconds)).toFixed(2)}`);
await client.deleteIndex(index, { ignoreMissing: true });
pinned.restore();
await client.close();
