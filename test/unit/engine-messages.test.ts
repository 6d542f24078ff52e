// scripts/engine says what happened, once (issue 50): stopping an engine that is not running says so and
// nothing else; starting one that already answers resolves nothing with Maven first.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain ES module of the scripts, untyped
import { stopLines, toResolve } from '../../scripts/engine/messages.mjs';

const CLI = path.resolve(__dirname, '../../scripts/engine/cli.mjs');

describe('engine:stop', () => {
  it('an engine that was not running: one line that says so, not "stopped"', () => {
    const lines = stopLines('opensearch', { flavour: 'opensearch', stopped: false });
    expect(lines.stdout).toBe('opensearch was not running (nothing started by scripts/engine)\n');
    expect(lines.stderr).toBe('');
  });

  it('an engine stopped: "<name> stopped" and the details on stderr', () => {
    const lines = stopLines('opensearch', { flavour: 'opensearch', stopped: true, pid: 42 });
    expect(lines.stdout).toBe('opensearch stopped\n');
    expect(lines.stderr).toMatch(/pid 42/);
  });

  it('the command, with an empty state folder (nothing of the running engines touched): one line', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'near-dup-engine-home-'));
    const out = execFileSync(process.execPath, [CLI, 'stop', 'opensearch1'], { encoding: 'utf8', env: { ...process.env, NEAR_DUP_ENGINE_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out).toBe('opensearch1 was not running (nothing started by scripts/engine)\n');
  });
});

describe('engine:start', () => {
  it('resolves with Maven only the engines that do not answer already', () => {
    expect(toResolve(['opensearch', 'elasticsearch9'], [true, false])).toEqual(['elasticsearch9']);
    expect(toResolve(['opensearch'], [true])).toEqual([]);
  });

  // Only with the development OpenSearch 3 running (it is reused, never started or stopped here).
  it.runIf(process.env.OPENSEARCH3_URL === 'http://127.0.0.1:9231')('an engine already running is reused without a word of Maven', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'near-dup-engine-home-'));
    const run = spawnSync(process.execPath, [CLI, 'start', 'opensearch3'], { encoding: 'utf8', env: { ...process.env, NEAR_DUP_ENGINE_HOME: home } });
    expect(run.stdout).toBe('opensearch3 http://127.0.0.1:9231\n');
    expect(run.stderr).toMatch(/already running at http:\/\/127\.0\.0\.1:9231, reused/);
    expect(run.stderr).not.toMatch(/Maven/);
  });
});
