#!/usr/bin/env node
// npm run engine:start|engine:stop|engine:status -- [NAME[,NAME...]|all|opensearch-cluster] (names: FLAVOURS in engines.mjs)
// (all: the single nodes; opensearch-cluster: the three nodes of an OpenSearch cluster, also one by one as
// opensearch-cluster-1 to -3)
// (opensearch-secured: OpenSearch 2.19.1 with its security plugin, TLS and test users, by name only)
// (and `node scripts/engine/cli.mjs resolve [...]` to download the Maven artifacts only).
// stdout: one line per engine, "<flavour> <url>" for start (a secured engine adds the path of its
// credentials file: CA and passwords), "<flavour> <state> <url>" for status, "<flavour> stopped" (or "<flavour> was not running ...") for stop;
// everything else (progress, timings) goes to stderr.
import { EngineError, ENGINES, FLAVOURS, GROUPS, logPath, parseFlavours, resolveArtifacts, SECURED, start, status, stop } from './engines.mjs';
import { stopLines, toResolve } from './messages.mjs';

const usage = `usage: node scripts/engine/cli.mjs start|stop|status|resolve [NAME[,NAME...]|all], NAME one of ${[...FLAVOURS, ...SECURED, ...Object.keys(GROUPS)].join(', ')}`;

async function main([command, which = 'all', ...rest]) {
  if (rest.length > 0 || !command) throw new EngineError(usage);
  const flavours = parseFlavours(which);
  switch (command) {
    case 'resolve': {
      for (const flavour of flavours) {
        const began = Date.now();
        resolveArtifacts(flavour);
        process.stderr.write(`engine: ${flavour}: Maven artifacts ready in ${((Date.now() - began) / 1000).toFixed(1)} s\n`);
      }
      return 0;
    }
    case 'start': {
      // Artifacts one engine at a time (Maven and one ~/.m2), then the JVMs side by side; an engine that
      // already answers is reused, so nothing is resolved for it (no "resolving ... with Maven" before "reused").
      const answering = await Promise.all(flavours.map(async (flavour) => (await status(flavour)).answering));
      for (const flavour of toResolve(flavours, answering)) resolveArtifacts(flavour);
      const results = await Promise.allSettled(flavours.map((flavour) => start(flavour)));
      let failed = 0;
      results.forEach((result, i) => {
        const flavour = flavours[i];
        if (result.status === 'fulfilled') {
          const r = result.value;
          process.stderr.write(
            r.reused
              ? `engine: ${flavour} ${r.version ?? ''} already running at ${r.url}, reused\n`
              : `engine: ${flavour} ${r.version} started in ${r.seconds.toFixed(1)} s (log ${logPath(flavour)})\n`,
          );
          if (r.credentials) process.stderr.write(`engine: ${flavour}: test users and roles in place; CA and passwords in ${r.credentials}\n`);
          process.stdout.write(r.credentials ? `${flavour} ${r.url} ${r.credentials}\n` : `${flavour} ${r.url}\n`);
        } else {
          failed++;
          process.stderr.write(`engine: ${flavour} failed to start: ${result.reason instanceof Error ? result.reason.message : result.reason}\n`);
        }
      });
      return failed > 0 ? 1 : 0;
    }
    case 'stop': {
      for (const flavour of flavours) {
        const result = await stop(flavour);
        const lines = stopLines(flavour, result);
        process.stderr.write(lines.stderr);
        process.stdout.write(lines.stdout);
      }
      return 0;
    }
    case 'status': {
      let down = 0;
      for (const flavour of flavours) {
        const s = await status(flavour);
        const state = s.managed ? 'running' : s.answering ? 'external' : 'stopped';
        if (!s.answering) down++;
        process.stdout.write(`${flavour} ${state} ${s.url}\n`);
        const details = s.managed
          ? `pid ${s.pid}, ${s.version ?? '?'}, health ${s.health ?? 'no answer'}, since ${s.startedAt}, data ${s.dataDir}, log ${s.log}`
          : s.answering
            ? `${s.answeringFlavour} ${s.version ?? ''} answers on port ${ENGINES[flavour].port} but was not started by scripts/engine`
            : `nothing answers on port ${ENGINES[flavour].port}`;
        process.stderr.write(`engine: ${flavour}: ${details}\n`);
      }
      return down > 0 ? 1 : 0;
    }
    default:
      throw new EngineError(usage);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`engine: ${err instanceof EngineError ? err.message : (err?.stack ?? String(err))}\n`);
    process.exitCode = 1;
  },
);
