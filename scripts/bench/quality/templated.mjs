// The templated corpus of bench:quality: real reference pages generated from templates, with truth by
// provenance. Two sources the project can install or generate, each page a document of one family:
//  - npm's own documentation (commands, configuring-npm, using-npm) from the `npm` package of three release
//    tracks: a command documented up to three times, sibling pages sharing whole config sections and notices;
//  - pydoc's text pages of the standard library (every public module and the public classes defined in it),
//    rendered by each Python 3 found (python3.9 ... python3.13, on PATH or under pyenv): a module or class
//    documented up to five times; unrelated classes share their inherited-method boilerplate.
// Then one page in eight (seeded) gets a planted copy in its family: 10% of its words changed, a paragraph
// deleted, or cut to 70%. Raw material and the built corpus are cached under the --cache folder.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { seededRandom } from '../corpus.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The npm releases documented: the last of majors 9 and 10, and 11 as measured first (pinned: the same pages on every run). */
export const NPM_RELEASES = ['9.9.4', '10.9.9', '11.21.3'];
const NPM_DOC_FOLDERS = ['commands', 'configuring-npm', 'using-npm'];
const PYTHON_MINORS = [9, 10, 11, 12, 13];
/** One page in this many gets a planted edit. */
const EDIT_EVERY = 8;
const SEED = 49;

const readJsonLines = (file) => gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const writeJsonLines = (file, docs) => writeFileSync(file, gzipSync(`${docs.map((d) => JSON.stringify(d)).join('\n')}\n`));

/** The templated corpus ({ id, family, text }), built once into the cache. */
export function templatedCorpus(cache) {
  const file = path.join(cache, 'templated.jsonl.gz');
  if (existsSync(file)) return readJsonLines(file);
  mkdirSync(cache, { recursive: true });
  const pages = [...npmPages(cache), ...pydocPages(cache)].sort((a, b) => (a.id < b.id ? -1 : 1));
  const docs = [...pages, ...plantedEdits(pages)];
  writeJsonLines(file, docs);
  return docs;
}

function npmPages(cache) {
  const folder = path.join(cache, 'npm');
  mkdirSync(folder, { recursive: true });
  const pages = [];
  for (const release of NPM_RELEASES) {
    const tarball = path.join(folder, `npm-${release}.tgz`);
    if (!existsSync(tarball)) {
      process.stderr.write(`templated: npm pack npm@${release}\n`);
      execFileSync('npm', ['pack', `npm@${release}`, '--pack-destination', folder, '--silent'], { stdio: ['ignore', 'ignore', 'inherit'] });
    }
    const unpacked = path.join(folder, release);
    if (!existsSync(unpacked)) {
      mkdirSync(unpacked);
      execFileSync('tar', ['xzf', tarball, '-C', unpacked, ...NPM_DOC_FOLDERS.map((f) => `package/docs/content/${f}`)]);
    }
    const track = `npm${release.split('.')[0]}`;
    for (const sub of NPM_DOC_FOLDERS) {
      const dir = path.join(unpacked, 'package/docs/content', sub);
      for (const name of readdirSync(dir).filter((n) => n.endsWith('.md')).sort()) {
        const family = `npm:${sub}/${name.slice(0, -3)}`;
        pages.push({ id: `${track}/${sub}/${name.slice(0, -3)}`, family, text: readFileSync(path.join(dir, name), 'utf8') });
      }
    }
  }
  return pages;
}

/** Each Python 3.9-3.13 found, by minor: on PATH as python3.X, else under pyenv's versions. */
function pythons() {
  const found = new Map();
  let pyenvRoot;
  try {
    pyenvRoot = execFileSync('pyenv', ['root'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {}
  for (const minor of PYTHON_MINORS) {
    const candidates = [];
    if (pyenvRoot && existsSync(path.join(pyenvRoot, 'versions'))) {
      for (const v of readdirSync(path.join(pyenvRoot, 'versions')).sort()) if (v.startsWith(`3.${minor}.`)) candidates.push(path.join(pyenvRoot, 'versions', v, 'bin', 'python3'));
    }
    candidates.push(`python3.${minor}`);
    for (const c of candidates) {
      try {
        execFileSync(c, ['-c', ''], { stdio: 'ignore' });
        found.set(minor, c);
        break;
      } catch {}
    }
  }
  return found;
}

function pydocPages(cache) {
  const folder = path.join(cache, 'pydoc');
  mkdirSync(folder, { recursive: true });
  const found = pythons();
  if (found.size === 0) throw new Error('templated: no python3.9 ... python3.13 found (on PATH or under pyenv); install one to build the pydoc pages');
  process.stderr.write(`templated: pydoc pages from Python 3.${[...found.keys()].join(', 3.')}\n`);
  const script = path.join(here, 'pydoc_pages.py');
  // Every version is asked for the same module names: those any of them lists as its standard library.
  const names = new Set();
  for (const python of found.values()) {
    const out = execFileSync(python, ['-c', 'import sys; print("\\n".join(getattr(sys, "stdlib_module_names", ())))'], { encoding: 'utf8' });
    for (const n of out.split('\n')) if (n) names.add(n);
  }
  const pages = [];
  for (const [minor, python] of found) {
    const file = path.join(folder, `python3.${minor}.jsonl.gz`);
    if (!existsSync(file)) {
      const env = { ...process.env, PYTHONHASHSEED: '0' }; // sets and dicts of str print in one order on every run
      const out = execFileSync(python, [script, ...[...names].sort()], { env, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
      writeFileSync(file, gzipSync(out));
    }
    for (const p of readJsonLines(file)) pages.push({ id: `py${p.python}/${p.family}`, family: `pydoc:${p.family}`, text: p.text });
  }
  return pages;
}

/**
 * One page in EDIT_EVERY gets a copy in its family: 10% of its words changed, a paragraph deleted, or cut to 70%.
 * The other templated corpora (awscli.mjs) plant theirs with it, so that every corpus has the same edits.
 */
export function plantedEdits(pages) {
  const rand = seededRandom(SEED);
  const vocabulary = [];
  for (const p of pages) for (const w of p.text.split(/\s+/)) if (/^[A-Za-z]{3,}$/.test(w) && rand() < 0.05) vocabulary.push(w);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const edits = {
    words10: (text) => text.replace(/\S+/g, (w) => (rand() < 0.1 ? pick(vocabulary) : w)),
    paragraph: (text) => {
      const paragraphs = text.split(/\n\s*\n/);
      if (paragraphs.length < 2) return undefined;
      paragraphs.splice(Math.floor(rand() * paragraphs.length), 1);
      return paragraphs.join('\n\n');
    },
    cut70: (text) => {
      const end = text.lastIndexOf(' ', Math.floor(text.length * 0.7));
      return text.slice(0, end > 0 ? end : Math.floor(text.length * 0.7));
    },
  };
  const kinds = Object.keys(edits);
  const out = [];
  for (const page of pages) {
    if (rand() >= 1 / EDIT_EVERY) continue;
    const kind = pick(kinds);
    const text = edits[kind](page.text);
    if (text?.trim() && text !== page.text) out.push({ id: `${page.id}#${kind}`, family: page.family, text });
  }
  return out;
}
