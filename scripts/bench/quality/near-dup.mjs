// near-dup end to end through its command line (dist/cli/main.js), as a user runs it: `ingest` the corpus
// into a fresh index, `dedup` it (its verified pairs written with --pairs), then every document's
// `<prefix>.cluster_id` read back by a scroll. A variant is a string of `;`-separated parts: a part without
// `=` is the condenser spec (--condenser), `name=value` is the flag --name value, given to ingest, dedup or
// both by the flags each lists in its --help-all (so a new option is there without changing the bench).
// Nothing here knows near-dup's defaults: the default row runs the commands with no option.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../../../dist/cli/main.js');

const helpOf = new Map();
function help(command) {
  if (!helpOf.has(command)) helpOf.set(command, execFileSync(process.execPath, [CLI, command, '--help-all'], { encoding: 'utf8' }));
  return helpOf.get(command);
}

/** The default of a flag, as `<command> --help-all` says it (for the table's label only). */
export function helpDefault(command, flag) {
  const text = help(command);
  const at = text.search(new RegExp(`--${flag}\\b`));
  if (at < 0) return undefined;
  const next = text.slice(at + 2).search(/\n\s+(-\w, )?--/);
  return /\[default: ([^\]]+)\]/.exec(text.slice(at, next < 0 ? undefined : at + 2 + next))?.[1];
}

/** A variant string as the flags of ingest and of dedup; a name neither command takes is refused, naming it. */
export function parseVariant(variant) {
  const flags = { ingest: [], dedup: [] };
  for (const part of variant.split(';').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const [name, value] = eq < 0 ? ['condenser', part] : [part.slice(0, eq).trim().replace(/^--/, ''), part.slice(eq + 1).trim()];
    const takers = ['ingest', 'dedup'].filter((c) => new RegExp(`--${name}(?![\\w-])`).test(help(c)));
    if (takers.length === 0) throw new Error(`--variant "${variant}": neither ingest nor dedup takes --${name} (see their --help-all)`);
    for (const c of takers) flags[c].push(`--${name}`, value);
  }
  return flags;
}

function run(args, log) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      if (log) writeFileSync(log, `$ near-dup ${args.join(' ')}\n${out}\n${err}`);
      if (code === 0) resolve(out);
      else reject(new Error(`near-dup ${args[0]} exited ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}

async function engine(url, method, route, body) {
  const res = await fetch(new URL(route, url), { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  const json = await res.json().catch(() => ({}));
  if (!res.ok && !(method === 'DELETE' && res.status === 404)) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/** Every document's cluster_id under the prefix (undefined: in no cluster), by a scroll. */
async function clusterIds(url, index, prefix) {
  const field = `${prefix}.cluster_id`;
  const out = new Map();
  let page = await engine(url, 'POST', `/${index}/_search?scroll=2m`, { size: 5000, _source: [field], query: { match_all: {} } });
  while (page.hits.hits.length > 0) {
    for (const hit of page.hits.hits) out.set(hit._id, hit._source?.[prefix]?.cluster_id);
    page = await engine(url, 'POST', '/_search/scroll', { scroll: '2m', scroll_id: page._scroll_id });
  }
  await engine(url, 'DELETE', '/_search/scroll', { scroll_id: page._scroll_id }).catch(() => {});
  return out;
}

/**
 * One near-dup row: the documents ingested into `index` (deleted first, and after unless keep), dedup run,
 * the clusters read back. Returns { clusters: Map id -> cluster key, pairs: [idA, idB, similarity], params,
 * seconds: { ingest, dedup } }.
 */
export async function runNearDup({ url, index, docsFile, variant = '', workDir, keep = false }) {
  const flags = parseVariant(variant);
  const prefixAt = flags.dedup.indexOf('--prefix');
  const prefix = prefixAt >= 0 ? flags.dedup[prefixAt + 1] : helpDefault('dedup', 'prefix').replace(/"/g, '');
  const pairsFile = path.join(workDir, `${index}.pairs.jsonl`);
  await engine(url, 'DELETE', `/${index}`);
  let started = performance.now();
  const ingested = JSON.parse(await run(['ingest', '--url', url, '--index', index, '--field', 'text', '--id-field', 'id', '--file', docsFile, '--errors-file', path.join(workDir, `${index}.errors.jsonl`), ...flags.ingest], path.join(workDir, `${index}.ingest.log`)));
  const ingest = (performance.now() - started) / 1000;
  started = performance.now();
  const summary = JSON.parse(await run(['dedup', '--url', url, '--index', index, '--pairs', pairsFile, ...flags.dedup], path.join(workDir, `${index}.dedup.log`)));
  const dedup = (performance.now() - started) / 1000;
  await engine(url, 'POST', `/${index}/_refresh`);
  const clusters = await clusterIds(url, index, prefix);
  if (!keep) await engine(url, 'DELETE', `/${index}`);
  const pairs = readFileSync(pairsFile, 'utf8').split('\n').filter(Boolean).map((l) => {
    const p = JSON.parse(l);
    return [p.a, p.b, p.jaccard];
  });
  const at = flags.dedup.indexOf('--min-similarity');
  const minSimilarity = Number(at >= 0 ? flags.dedup[at + 1] : helpDefault('dedup', 'min-similarity'));
  return { clusters, pairs, params: ingested.params ?? summary.params, minSimilarity, summary, seconds: { ingest, dedup } };
}
