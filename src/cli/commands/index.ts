// Every command module the CLI registers, one per line.
import type { CommandModule } from 'yargs';
import { annotateCommand } from './annotate.js';
import { dashboardsCommand } from './dashboards.js';
import { dedupCommand } from './dedup.js';
import { evaluateCommand } from './evaluate.js';
import { exploreCommand } from './explore.js';
import { ingestCommand } from './ingest.js';
import { initCommand } from './init.js';
import { paramsCommand } from './params.js';
import { proxyCommand } from './proxy.js';
import { signCommand } from './sign.js';
import { similarCommand } from './similar.js';

export const commands: CommandModule<any, any>[] = [
  signCommand,
  paramsCommand,
  initCommand,
  annotateCommand,
  ingestCommand,
  similarCommand,
  dedupCommand,
  dashboardsCommand,
  proxyCommand,
  evaluateCommand,
  exploreCommand,
];
