// The numbering of an index too large to keep its ids in memory: a DocNumbers (doc-numbers.ts) whose ids are
// in a spill folder of its own. dedup.ts tells a run whose ids are spilled by this class.
import os from 'node:os';
import { DocNumbers } from './doc-numbers.js';
import type { SpillFolder } from '../spill/spill-folder.js';

/** A numbering whose ids are on disk, in a spill folder of its own made in `parent` (default: the system's temporary folder). */
export class SpilledIds extends DocNumbers {
  declare readonly folder: SpillFolder;

  constructor(parent = os.tmpdir()) {
    super(parent);
  }

  get path(): string {
    return this.folder.path;
  }
}
