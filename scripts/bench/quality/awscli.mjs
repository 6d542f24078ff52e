// The awscli corpus of bench:quality: a second templated corpus, of the kind of CLI reference documentation
// (every page of one generator; a command documented in up to three releases; sibling commands sharing whole
// option sections and notices; the pages of unrelated services' list and describe commands sharing nearly all
// their words), so that the defaults chosen on the templated corpus can be checked on another one.
//  - the AWS CLI v1 reference pages of three awscli releases years apart, 1.18.223 (January 2021), 1.27.30
//    (December 2022) and 1.36.40 (January 2025), each pip-installed with the botocore it pins in a venv of
//    its own (Python 3.9) under <cache>/awscli; a page is what `aws <service> <command> help` shows on
//    Linux (awscli's help classes, docutils' man writer, groff -T ascii, overstrikes taken out; hyphenation
//    off), rendered by one Python process a release (awscli_pages.py), plus each service's own page
//    (`aws <service> help`, command "help");
//  - a seeded sample of SERVICES of the services all three releases have, and of each at most COMMANDS of
//    the commands any of them has (ec2 has 500 and more);
//  - family: `awscli:<service>/<command>` (one command's releases); id `awscli<release>/<service>/<command>`;
//  - planted edits: templated.mjs's (one page in eight copied with 10% of its words changed, a paragraph
//    deleted, or cut to 70%).
// Built once into <cache>/awscli.jsonl.gz (about 4,500 pages); the first build installs the three releases
// and renders their pages, a few minutes.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { shuffled } from '../corpus.mjs';
import { plantedEdits } from './templated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The releases documented (pinned: the same pages on every run). */
export const AWSCLI_RELEASES = ['1.18.223', '1.27.30', '1.36.40'];
/** How many services are sampled, and at most how many commands of each. */
const SERVICES = 50;
const COMMANDS = 40;
const SEED = 49;
/** awscli 1.18 pins PyYAML 5.3.1, which builds on Python 3.9 and earlier; every release runs on one Python. */
const PYTHON_MINORS = [9, 8];

const readJsonLines = (file) => gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const say = (line) => process.stderr.write(`awscli: ${line}\n`);

/** The awscli corpus ({ id, family, text }), built once into the cache. */
export async function awscliCorpus(cache) {
  const file = path.join(cache, 'awscli.jsonl.gz');
  if (existsSync(file)) return readJsonLines(file);
  const folder = path.join(cache, 'awscli');
  mkdirSync(folder, { recursive: true });
  const pythons = AWSCLI_RELEASES.map((release) => venvPython(folder, release));
  const lists = pythons.map((python, k) => listed(folder, AWSCLI_RELEASES[k], python));
  const sample = sampled(lists);
  const rendered = await Promise.all(pythons.map((python, k) => renderedPages(folder, AWSCLI_RELEASES[k], python, sample)));
  const pages = rendered.flat().sort((a, b) => (a.id < b.id ? -1 : 1));
  const docs = [...pages, ...plantedEdits(pages)];
  writeFileSync(file, gzipSync(`${docs.map((d) => JSON.stringify(d)).join('\n')}\n`));
  return docs;
}

const short = (release) => release.split('.').slice(0, 2).join('.');

/** A Python 3.9 (or 3.8): on PATH as python3.X, else under pyenv's versions. */
function basePython() {
  let pyenvRoot;
  try {
    pyenvRoot = execFileSync('pyenv', ['root'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {}
  for (const minor of PYTHON_MINORS) {
    const candidates = [`python3.${minor}`];
    const versions = pyenvRoot && path.join(pyenvRoot, 'versions');
    if (versions && existsSync(versions)) for (const v of readdirSync(versions).sort()) if (v.startsWith(`3.${minor}.`)) candidates.push(path.join(versions, v, 'bin', 'python3'));
    for (const c of candidates) {
      try {
        execFileSync(c, ['-c', ''], { stdio: 'ignore' });
        return c;
      } catch {}
    }
  }
  throw new Error(`awscli: no python3.${PYTHON_MINORS.join(' or python3.')} found (on PATH or under pyenv); install one to build the awscli pages`);
}

/** The python of the release's venv, made and installed the first time (a venv left half-installed is made again). */
function venvPython(folder, release) {
  const venv = path.join(folder, `venv-${short(release)}`);
  const done = path.join(venv, `installed-${release}`);
  const python = path.join(venv, 'bin', 'python');
  if (existsSync(done)) return python;
  rmSync(venv, { recursive: true, force: true });
  say(`pip install awscli==${release} into ${venv}`);
  execFileSync(basePython(), ['-m', 'venv', venv], { stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(python, ['-m', 'pip', 'install', '-q', `awscli==${release}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  writeFileSync(done, '');
  return python;
}

/** The release's services and the commands of each, asked once. */
function listed(folder, release, python) {
  const file = path.join(folder, `list-${short(release)}.json`);
  if (!existsSync(file)) writeFileSync(file, execFileSync(python, [path.join(here, 'awscli_pages.py'), 'list'], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'inherit'] }));
  return JSON.parse(readFileSync(file, 'utf8')).services;
}

/** SERVICES of the services every release has, and at most COMMANDS of the commands any of them gives each. */
function sampled(lists) {
  const common = Object.keys(lists[0]).filter((s) => lists.every((l) => s in l)).sort();
  const sample = {};
  for (const service of shuffled(common, SEED).slice(0, SERVICES).sort()) {
    const commands = [...new Set(lists.flatMap((l) => l[service]))].sort();
    sample[service] = shuffled(commands, SEED).slice(0, COMMANDS).sort();
  }
  return sample;
}

/** The release's pages of the sample, rendered once (in a child process, beside the other releases). */
async function renderedPages(folder, release, python, sample) {
  const file = path.join(folder, `pages-${short(release)}-s${SERVICES}-c${COMMANDS}.jsonl.gz`);
  if (!existsSync(file)) {
    say(`rendering the pages of awscli ${release}`);
    writeFileSync(file, gzipSync(await output(python, [path.join(here, 'awscli_pages.py'), 'render'], JSON.stringify(sample))));
  }
  const track = `awscli${short(release)}`;
  return readJsonLines(file).map((p) => ({ id: `${track}/${p.service}/${p.command}`, family: `awscli:${p.service}/${p.command}`, text: p.text }));
}

/** What the command prints, given `input`; its stderr passed through. */
function output(command, args, input) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`awscli: ${command} ${args.join(' ')} exited with ${code}`))));
    child.stdin.end(input);
  });
}
