// Every command module the CLI registers, by name, each loaded only when its command runs (or for the
// full help): loading them all (three engine clients, Vega) cost about 0.3 s of CPU before any command.
import type { CommandModule } from 'yargs';

/** How to load each command module, by the command's name. */
export const commandLoaders: Record<string, () => Promise<CommandModule<any, any>>> = {
  sign: async () => (await import('./sign.js')).signCommand,
  params: async () => (await import('./params.js')).paramsCommand,
  init: async () => (await import('./init.js')).initCommand,
  annotate: async () => (await import('./annotate.js')).annotateCommand,
  ingest: async () => (await import('./ingest.js')).ingestCommand,
  similar: async () => (await import('./similar.js')).similarCommand,
  dedup: async () => (await import('./dedup.js')).dedupCommand,
  dashboards: async () => (await import('./dashboards.js')).dashboardsCommand,
  proxy: async () => (await import('./proxy.js')).proxyCommand,
  evaluate: async () => (await import('./evaluate.js')).evaluateCommand,
  explore: async () => (await import('./explore.js')).exploreCommand,
};
