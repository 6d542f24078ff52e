// Every command module the CLI registers, one per line.
import type { CommandModule } from 'yargs';
import { paramsCommand } from './params.js';
import { signCommand } from './sign.js';

export const commands: CommandModule<any, any>[] = [
  signCommand,
  paramsCommand,
];
