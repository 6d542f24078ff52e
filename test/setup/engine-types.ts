// What the engine harness hands to integration tests (vitest provide/inject).
import type { Flavour } from '../../src/engine/detect.js';

export interface TestEngine {
  flavour: Flavour;
  /** Without credentials; credentials for explicit URLs come from the SEARCH_* environment variables. */
  url: string;
  version: string;
  /** Where the engine came from: an explicit URL, a testcontainers container, or scripts/engine. */
  source: 'url' | 'docker' | 'embedded';
}

declare module 'vitest' {
  export interface ProvidedContext {
    engines: TestEngine[];
    /** Why there are no engines, when there are none (the tests are then skipped, outside CI). */
    enginesMissing: string;
  }
}
