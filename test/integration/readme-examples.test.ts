// The README's console examples, run as written against each real engine of the full suite, in order, in a
// scratch folder: a block fails, named by its line in README.md, when a command exits with another status
// than it shows or prints other lines than it shows (test/support/readme-examples.ts: the conventions).
//
// What is substituted, and nothing else: `npx near-dup` runs dist/cli/main.js (built by `npm test`'s
// pretest; a scratch folder has no near-dup in its node_modules), `npm run demo` runs scripts/demo.mjs (the
// same without the build), SEARCH_URL is the engine's URL, so are the README's local engine URLs
// (127.0.0.1:9201 and localhost:9201), and the servers' ports (9290 for the proxy, 9280 for the explorer)
// are free ports, given with --listen when the command names none. In the output the engine's URL, product
// and version read as the README's default engine (opensearch 2.19.1 at http://127.0.0.1:9201) and the
// free ports as the README's. Progress lines, which depend on time, are off (NEAR_DUP_PROGRESS_SECONDS).
//
// Then the TypeScript blocks (```ts) of the README and of docs/library.md, in order, after the console
// blocks (they use the index `news` of the ingest example): each stripped of its types (vite's
// transformWithOxc, which vitest runs on; typescript 7 has no JavaScript API) and run by node as a module in
// the scratch folder, `from 'near-dup'` importing the built package (dist/index.js), http://localhost:9200
// the engine's URL. A block fails when node exits with another status than 0.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { transformWithOxc } from 'vite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI } from '../support/documents.js';
import { consoleBlocks, matchOutput, outputReached, type ReadmeCommand, shellFencesOtherThanConsole, stripComment } from '../support/readme-examples.js';
import { forEachEngine } from './harness.js';

const root = path.resolve(__dirname, '../..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const blocks = consoleBlocks(readme);
const running = blocks.filter((b) => !b.notRun);
const typeScriptBlocks = ['README.md', 'docs/library.md'].flatMap((file) => codeBlocks(readFileSync(path.join(root, file), 'utf8'), 'ts').map((b) => ({ file, ...b })));

/** What the README's output shows for the engine the test runs on. */
const README_ENGINE = { hostPort: '127.0.0.1:9201', product: 'opensearch 2.19.1' };
const README_PORTS = { proxy: 9290, explore: 9280 };

it('every shell example of the README is a console block the test reads: run, or marked with why it is not', () => {
  expect(shellFencesOtherThanConsole(readme), 'lines of ```sh or ```bash fences (use ```console)').toEqual([]);
  expect(running.length).toBeGreaterThanOrEqual(10);
  for (const block of blocks) expect(block.commands.length, `README.md:${block.line}: a console block without a $ command`).toBeGreaterThan(0);
});

it('the README names the indices its examples use (each made by an example, or the demo\'s)', () => {
  const made = new Set(['near-dup-demo-licenses']);
  for (const block of running) {
    for (const command of block.commands) {
      for (const name of indicesMade(command.text)) made.add(name);
      for (const name of indicesUsed(command.text)) {
        // A pattern (the proxy's --index 'news*') names the indices its clients will make.
        expect(made.has(name) || name.includes('*'), `README.md:${command.line}: index "${name}" is used before an example makes it`).toBe(true);
      }
    }
  }
});

forEachEngine('README examples', (ctx) => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'nd-readme-'));
  const ports = { proxy: 0, explore: 0 };
  const indices = new Set<string>(['near-dup-demo-licenses']);
  const templates = new Set<string>();
  for (const block of running)
    for (const c of block.commands) {
      for (const name of [...indicesMade(c.text), ...indicesUsed(c.text)]) if (!/[*,]/.test(name)) indices.add(name);
      for (const m of c.text.matchAll(/--template-name\s+(\S+)/g)) templates.add(m[1]);
    }
  const clean = async () => {
    for (const name of indices) await ctx.client.deleteIndex(name, { ignoreMissing: true }).catch(() => undefined);
    for (const name of templates) {
      await ctx.client.request('DELETE', `/_index_template/${name}`).catch(() => undefined);
      await ctx.client.request('DELETE', `/_component_template/${name}-fields`).catch(() => undefined);
    }
  };

  beforeAll(async () => {
    // The examples' data files, where a clone has them, and the clone's node_modules (a README example reads
    // a text from the spdx-license-list package, as it does in a clone).
    cpSync(path.join(root, 'docs/examples'), path.join(scratch, 'docs/examples'), { recursive: true });
    symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));
    mkdirSync(path.join(scratch, 'bin'));
    writeFileSync(path.join(scratch, 'bin/near-dup'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(path.join(scratch, 'bin/near-dup'), 0o755);
    ports.proxy = await freePort();
    ports.explore = await freePort();
    await clean();
  });
  afterAll(async () => {
    await clean();
    rmSync(scratch, { recursive: true, force: true }); // the node_modules link goes, not what it points to
  });

  const engineHostPort = () => new URL(ctx.engine.url).host;
  const env = () => ({
    ...process.env,
    SEARCH_URL: ctx.engine.url,
    PATH: `${path.join(scratch, 'bin')}:${process.env.PATH}`,
    NEAR_DUP_PROGRESS_SECONDS: '100000',
    DASHBOARDS_URL: undefined,
    FORCE_COLOR: '0',
  });

  /** The command as run here (see the top of this file). */
  const asRun = (command: ReadmeCommand): string => {
    let text = command.text
      .replace(/\bnpx near-dup\b/g, 'near-dup')
      .replace(/\bnpm run demo\b/g, `"${process.execPath}" "${path.join(root, 'scripts/demo.mjs')}"`)
      .replace(/\b(?:127\.0\.0\.1|localhost):9201\b/g, engineHostPort())
      .replace(new RegExp(`\\b(127\\.0\\.0\\.1|localhost):${README_PORTS.proxy}\\b`, 'g'), `$1:${ports.proxy}`)
      .replace(new RegExp(`\\b(127\\.0\\.0\\.1|localhost):${README_PORTS.explore}\\b`, 'g'), `$1:${ports.explore}`);
    const server = /^near-dup (proxy|explore)\b/.exec(stripComment(text));
    if (server && !/--listen\b/.test(text)) text = `${stripComment(text)} --listen 127.0.0.1:${ports[server[1] as 'proxy' | 'explore']}`;
    return text;
  };

  /** The output as the README shows it (see the top of this file). */
  const asShown = (output: string): string => {
    const product = `${ctx.engine.flavour} ${ctx.engine.version}`;
    return output
      .split(ctx.engine.url.replace(/\/+$/, ''))
      .join(`http://${README_ENGINE.hostPort}`)
      .split(engineHostPort())
      .join(README_ENGINE.hostPort)
      .split(product)
      .join(README_ENGINE.product)
      .replace(new RegExp(`(127\\.0\\.0\\.1|localhost):${ports.proxy}\\b`, 'g'), `$1:${README_PORTS.proxy}`)
      .replace(new RegExp(`(127\\.0\\.0\\.1|localhost):${ports.explore}\\b`, 'g'), `$1:${README_PORTS.explore}`);
  };

  for (const block of running) {
    it(`README.md:${block.line} runs as written: ${block.commands[0].shown.slice(0, 90)}`, async () => {
      const background: ChildProcess[] = [];
      try {
        for (const command of block.commands) {
          const where = `README.md:${command.line} (the block at line ${block.line}): $ ${command.shown}`;
          if (command.background) {
            const started = start(asRun(command), scratch, env());
            background.push(started.child);
            const reached = await started.until((out) => outputReached(command.output, asShown(out), block.numbersVary), 120_000);
            if (!reached.ok) throw new Error(`${where}\nstarted in the background, its output never showed:\n${command.output.join('\n')}\nit printed:\n${asShown(reached.output)}`);
            continue;
          }
          const run = await start(asRun(command), scratch, env()).done;
          const output = asShown(run.output);
          if (run.status !== command.expectedStatus) {
            throw new Error(`${where}\nexited ${run.status ?? run.signal}, the README shows ${command.expectedStatus === 0 ? 'success' : `exit ${command.expectedStatus}`}; it printed:\n${output}`);
          }
          if (command.output.length === 0) continue;
          const matched = matchOutput(command.output, output, block.numbersVary);
          if (!matched.ok) {
            throw new Error(`${where}\nprinted what the README does not show (first line not found: ${JSON.stringify(matched.expected)});\nthe README shows:\n${command.output.join('\n')}\nit printed:\n${output}`);
          }
        }
      } finally {
        for (const child of background) await stop(child);
      }
    }, 600_000);
  }

  for (const block of typeScriptBlocks) {
    it(`${block.file}:${block.line} (TypeScript) runs as written`, async () => {
      const code = block.code.replace(/from 'near-dup'/g, `from '${pathToFileURL(path.join(root, 'dist/index.js')).href}'`).replaceAll('http://localhost:9200', ctx.engine.url.replace(/\/+$/, ''));
      const js = (await transformWithOxc(code, 'block.ts', { lang: 'ts' })).code;
      const file = path.join(scratch, `${block.file.replace(/\W+/g, '-')}-${block.line}.mjs`);
      writeFileSync(file, js);
      const run = await start(`"${process.execPath}" "${file}"`, scratch, env()).done;
      expect(run.status, `${block.file}:${block.line}: the TypeScript block exited ${run.status ?? run.signal}; it printed:\n${asShown(run.output)}`).toBe(0);
    }, 120_000);
  }
});

it('the README and docs/library.md have TypeScript blocks, each run above', () => {
  expect(typeScriptBlocks.map((b) => b.file)).toEqual(expect.arrayContaining(['README.md', 'docs/library.md']));
  for (const block of typeScriptBlocks) expect(block.code, `${block.file}:${block.line}`).toMatch(/from 'near-dup'/);
});

/** The fenced blocks of one language in a markdown text, with the line of each opening fence. */
function codeBlocks(markdown: string, language: string): Array<{ line: number; code: string }> {
  const lines = markdown.split('\n');
  const found: Array<{ line: number; code: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== `\`\`\`${language}`) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    found.push({ line: i + 1, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return found;
}

/** bash running one command, stdout and stderr in one stream as a terminal shows them, in a process group of its own. */
function start(command: string, cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn('bash', ['-c', `exec 2>&1\n${command}`], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const listeners: Array<() => void> = [];
  child.stdout!.on('data', (b: Buffer) => {
    output += b.toString('utf8');
    for (const l of listeners) l();
  });
  child.stderr!.on('data', (b: Buffer) => (output += b.toString('utf8')));
  const done = new Promise<{ status: number | null; signal: NodeJS.Signals | null; output: string }>((resolve) =>
    child.on('close', (status, signal) => resolve({ status, signal, output })),
  );
  const until = (reached: (out: string) => boolean, ms: number) =>
    new Promise<{ ok: boolean; output: string }>((resolve) => {
      const check = () => {
        if (reached(output)) finish(true);
      };
      const timer = setTimeout(() => finish(false), ms);
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        listeners.splice(listeners.indexOf(check), 1);
        resolve({ ok, output });
      };
      listeners.push(check);
      void done.then(() => finish(reached(output)));
      check();
    });
  return { child, done, until };
}

/** Ctrl-C to a background command's process group, then SIGKILL if it has not ended within 15 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const ended = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  kill('SIGINT');
  const timer = setTimeout(() => kill('SIGKILL'), 15_000);
  await ended;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Indices a command makes: `init --index`, `ingest --index`, a bulk request to /INDEX/_bulk, a bulk file's _index. */
function indicesMade(command: string): string[] {
  const names: string[] = [];
  if (/\bnear-dup (init|ingest)\b/.test(command)) for (const m of command.matchAll(/--index\s+'?([^\s']+)'?/g)) names.push(m[1]);
  for (const m of command.matchAll(/\/([a-z0-9][a-z0-9_.-]*)\/_bulk\b/g)) names.push(m[1]);
  for (const m of command.matchAll(/@(docs\/examples\/\S+)/g)) {
    for (const i of readFileSync(path.join(root, m[1]), 'utf8').matchAll(/"_index":"([^"]+)"/g)) names.push(i[1]);
  }
  return names;
}

/** Indices a command reads or writes by name: every other `--index`. */
function indicesUsed(command: string): string[] {
  if (/\bnear-dup (init|ingest)\b/.test(command)) return [];
  return [...command.matchAll(/--index\s+'?([^\s']+)'?/g)].map((m) => m[1]);
}
