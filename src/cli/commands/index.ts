// Every command module the CLI registers, one per line.
import type { CommandModule } from 'yargs';

export const commands: CommandModule<any, any>[] = [];
