// The benchmark index: the PEP corpus replicated with small random edits (each copy of a revision gets
// one to five words replaced, dropped or inserted) up to `target` documents, texts cut at `maxChars` so
// that 200,000 documents fit the embedded engine's heap. Deterministic: every run builds the same index.
import os from 'node:os';
import PQueue from 'p-queue';
import { loadCorpus } from './corpus.mjs';

export async function replicatedDocs(target, maxChars) {
  let seed = 12345;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const edited = (text) => {
    const words = text.split(' ');
    const edits = 1 + Math.floor(rand() * 5);
    for (let e = 0; e < edits && words.length > 2; e++) {
      const at = Math.floor(rand() * words.length);
      const kind = rand();
      if (kind < 0.4) words[at] = `edit${Math.floor(rand() * 1e6)}`;
      else if (kind < 0.7) words.splice(at, 1);
      else words.splice(at, 0, `insert${Math.floor(rand() * 1e6)}`);
    }
    return words.join(' ');
  };
  const corpus = (await loadCorpus()).map((d) => ({ ...d, text: d.text.slice(0, maxChars) }));
  const docs = [];
  for (let copy = 0; docs.length < target; copy++) {
    for (const d of corpus) {
      if (docs.length >= target) break;
      const id = `${d.id}-c${copy}`;
      docs.push({ id, pep: d.pep, version: d.version, copy, text: copy === 0 ? d.text : edited(d.text) });
    }
  }
  return docs;
}

/**
 * A fresh index of `shards` primaries (1) holding `docs`, bulk-loaded with 2 requests in flight (after
 * `prepare`, e.g. a mapping, when given). Returns the seconds the loading took.
 */
export async function loadIndex(client, index, docs, { prepare, shards = 1 } = {}) {
  await client.deleteIndex(index, { ignoreMissing: true });
  await client.createIndex(index, { settings: { number_of_shards: shards, number_of_replicas: 0, refresh_interval: '30s' } });
  await prepare?.();
  const t0 = performance.now();
  const queue = new PQueue({ concurrency: 2 });
  for (let i = 0; i < docs.length; i += 1000) {
    const body = docs.slice(i, i + 1000).flatMap((d) => [JSON.stringify({ index: { _index: index, _id: d.id } }), JSON.stringify(d)]).join('\n') + '\n';
    await queue.onSizeLessThan(2);
    queue.add(async () => {
      const r = await client.bulkNdjson(body);
      if (r.errors) throw new Error('indexing failed');
    });
  }
  await queue.onIdle();
  await client.request('PUT', `/${index}/_settings`, { index: { refresh_interval: '1s' } });
  await client.refresh(index);
  const seconds = (performance.now() - t0) / 1000;
  // Let the engine finish the merges the loading started, so that they do not run during (and are not
  // charged to) whatever is measured next: every measured run starts from the same merged index.
  await client.request('POST', `/${index}/_forcemerge`, undefined, { max_num_segments: 1 });
  return seconds;
}

/**
 * Pins the engine (every thread of the node `client` talks to) to the last core and this process to the
 * others, as on separate machines; returns what was done, the cores for child processes (`taskset -c`),
 * and how to undo it. On one core, or without taskset, nothing is pinned and it says so.
 */
export async function pinApart(client, execFileSync) {
  const cores = os.availableParallelism();
  const info = await client.request('GET', '/_nodes/_local/process');
  const enginePid = Object.values(info.nodes)[0].process.id;
  const none = (why) => ({ description: `not pinned (${why})`, childCores: undefined, restore: () => {} });
  if (cores < 2) return none('one core');
  const loader = cores === 2 ? '0' : `0-${cores - 2}`;
  try {
    execFileSync('taskset', ['-a', '-cp', String(cores - 1), String(enginePid)], { stdio: 'ignore' });
    execFileSync('taskset', ['-a', '-cp', loader, String(process.pid)], { stdio: 'ignore' });
  } catch (err) {
    return none(`taskset: ${err.message.split('\n')[0]}`);
  }
  return {
    description: `engine on core ${cores - 1}, near-dup and the loader on ${cores === 2 ? 'core 0' : `cores ${loader}`}`,
    childCores: loader,
    restore: () => execFileSync('taskset', ['-a', '-cp', `0-${cores - 1}`, String(enginePid)], { stdio: 'ignore' }),
  };
}

/** SEARCH_URL, or the embedded OpenSearch (started if needed). */
export function benchUrl(execFileSync, enginesCli) {
  if (process.env.SEARCH_URL) return process.env.SEARCH_URL;
  const out = execFileSync(process.execPath, [enginesCli, 'start', 'opensearch'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return out.trim().split('\n').map((l) => l.split(' ')).find(([f]) => f === 'opensearch')[1];
}

/** `--name N` from the command line, as a number, or the fallback. */
export function numberArg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
