// Runs a block of tests against the secured OpenSearch that setup.ts found: an admin client for setting
// up and checking, unique index names inside the test roles' index pattern (deleted after the block), a
// working folder per block for checkpoints and journals, and the CLI from dist/ run as a given user, its
// output kept so that a test can check that no secret ever appears in it.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { connect, type EngineClient } from '../../src/engine/client.js';
import type { SecuredEngine, SecuredUser } from './secured-types.js';

export const CLI = path.resolve(__dirname, '../../dist/cli/main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SecuredContext {
  readonly engine: SecuredEngine;
  /** As admin (all_access), connected in beforeAll. */
  readonly admin: EngineClient;
  user(name: 'nd_admin' | 'nd_user' | 'nd_reader' | 'admin'): SecuredUser;
  /** A new unique index name inside the roles' index pattern, deleted after the block. */
  index(label: string): string;
  /** The block's working folder: the CLI runs there (checkpoints, journals, errors files). */
  readonly dir: string;
  /**
   * The CLI as `user`, trusting the engine's CA: credentials through SEARCH_USERNAME/SEARCH_PASSWORD
   * (`via: 'env'`, the default) or --username/--password (`via: 'flags'`). SEARCH_* of the environment the
   * tests run in are not passed on.
   */
  cli(user: SecuredUser | undefined, args: string[], options?: { via?: 'env' | 'flags'; caFile?: string | null }): CliResult;
  /** A long-running command (explore), stopped with SIGTERM when `body` is done; `body` gets its URL. */
  serve<T>(user: SecuredUser, args: string[], body: (url: string) => Promise<T>): Promise<{ value: T; result: CliResult }>;
  /** Everything the CLI printed in this block, one entry per run. */
  readonly printed: string[];
}

/** A password as it could leak: itself, URL-encoded, and inside a Basic authorization header. */
export function secretForms(user: SecuredUser): string[] {
  return [user.password, encodeURIComponent(user.password), Buffer.from(`${user.username}:${user.password}`).toString('base64')];
}

/** The text of every file under `dir` (checkpoints, journals, reports...), by path. */
export function filesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files.set(file, readFileSync(file).toString('latin1'));
  }
  return files;
}

/** Whether the text holds a JavaScript stack trace ("    at fn (file:line:col)"). */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+:\d+:\d+\)?$/m.test(text);
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('SEARCH_')) delete env[name];
  return env;
}

export function describeSecured(title: string, body: (ctx: SecuredContext) => void): void {
  const engine = inject('secured');
  if (!engine) {
    describe.skip(`${title} [no secured engine: ${inject('securedMissing') || 'none found'}]`, () => {
      it('needs a real OpenSearch with its security plugin', () => undefined);
    });
    return;
  }
  describe(`${title} on opensearch ${engine.version} with security`, () => {
    let admin: EngineClient | undefined;
    const indices: string[] = [];
    const printed: string[] = [];
    // Made in beforeAll: collecting the tests (vitest list) runs no hook that would remove it.
    let dir = '';
    const prefix = engine.indexPattern.replace(/\*$/, '');
    const connection = (user: SecuredUser | undefined, via: 'env' | 'flags', caFile: string | null | undefined) => {
      const env = cleanEnv();
      const args: string[] = ['--url', engine.url];
      const ca = caFile === undefined ? engine.caFile : caFile;
      if (ca !== null) args.push('--ca-file', ca);
      if (user && via === 'flags') args.push('--username', user.username, '--password', user.password);
      if (user && via === 'env') Object.assign(env, { SEARCH_USERNAME: user.username, SEARCH_PASSWORD: user.password });
      return { env, args };
    };
    const ctx: SecuredContext = {
      engine,
      get dir(): string {
        if (!dir) throw new Error('ctx.dir is made in beforeAll: use it inside tests and hooks');
        return dir;
      },
      printed,
      get admin(): EngineClient {
        if (!admin) throw new Error('ctx.admin is connected in beforeAll: use it inside tests and hooks');
        return admin;
      },
      user(name) {
        const user = engine.users[name];
        if (!user) throw new Error(`no test user "${name}": see scripts/engine/secured-users.json`);
        return user;
      },
      index(label) {
        const slug = label.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
        const name = `${prefix}${slug}-${process.pid}-${randomBytes(3).toString('hex')}`;
        indices.push(name);
        return name;
      },
      cli(user, args, options = {}) {
        const { env, args: connectionArgs } = connection(user, options.via ?? 'env', options.caFile);
        const run = spawnSync(process.execPath, [CLI, ...args, ...connectionArgs], { cwd: dir, env, encoding: 'utf8', timeout: 180_000 });
        const result = { code: run.status, stdout: run.stdout ?? '', stderr: run.stderr ?? '' };
        printed.push(`${result.stdout}\n${result.stderr}`);
        return result;
      },
      async serve(user, args, body) {
        const { env, args: connectionArgs } = connection(user, 'env', undefined);
        const child = spawn(process.execPath, [CLI, ...args, ...connectionArgs, '--listen', '127.0.0.1:0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c) => (stdout += c));
        child.stderr.on('data', (c) => (stderr += c));
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        try {
          const deadline = Date.now() + 60_000;
          let url: string | undefined;
          while (!(url = / at (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)?.[1]) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
          if (!url) throw new Error(`${args[0]} did not start listening: ${stderr.trim()}`);
          const value = await body(url);
          child.kill('SIGTERM');
          const code = await exited;
          const result = { code, stdout, stderr };
          return { value, result };
        } finally {
          if (child.exitCode === null) child.kill('SIGKILL');
          printed.push(`${stdout}\n${stderr}`);
        }
      },
    };
    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'nd-secured-'));
      const { username, password } = engine.users.admin;
      admin = await connect({ url: engine.url, username, password, caFile: engine.caFile });
    });
    afterAll(async () => {
      if (admin) {
        for (const index of indices) await admin.deleteIndex(index).catch(() => undefined);
        await admin.close();
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    });
    body(ctx);
  });
}
