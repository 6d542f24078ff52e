// What the engine harness hands to integration tests (vitest provide/inject).
import type { Flavour } from '../../src/engine/detect.js';
import { majorsOf } from '../../src/engine/support.js';

export interface TestEngine {
  flavour: Flavour;
  /** Without credentials; credentials for explicit URLs come from the SEARCH_* environment variables. */
  url: string;
  version: string;
  /** Where the engine came from: an explicit URL, a testcontainers container, or scripts/engine. */
  source: 'url' | 'docker' | 'embedded';
  /**
   * Which integration tests run here: `full` on the newest major of each flavour found, `smoke` (init,
   * annotate, similar and dedup on a small corpus: test/integration/smoke.test.ts) on the older ones;
   * NEAR_DUP_FULL_SUITE=all runs everything everywhere.
   */
  suite: 'full' | 'smoke';
}

/**
 * The name scripts/engine and CI give an engine of this flavour and version (opensearch3, elasticsearch7...):
 * the support table's (src/engine/support.json), or flavour and major for a major the table does not list.
 */
export function engineName(flavour: Flavour, version: string): string {
  const major = Number.parseInt(version, 10);
  return majorsOf(flavour).find((m) => m.major === major)?.engine.name ?? `${flavour}${major}`;
}

/** Full suite on the newest major of each flavour (or everywhere), the smoke subset on the others. */
export function assignSuites<T extends Omit<TestEngine, 'suite'>>(engines: T[], everywhere: boolean): Array<T & Pick<TestEngine, 'suite'>> {
  const newest = new Map<Flavour, number>();
  for (const e of engines) newest.set(e.flavour, Math.max(newest.get(e.flavour) ?? 0, Number.parseInt(e.version, 10)));
  return engines.map((e) => ({ ...e, suite: everywhere || Number.parseInt(e.version, 10) === newest.get(e.flavour) ? 'full' : 'smoke' }));
}

/** A cluster of several nodes for test/integration/cluster.test.ts. */
export interface TestCluster {
  /** Every node's URL, comma-separated (as --url takes them). */
  url: string;
  version: string;
  /** Each node; `name` is its scripts/engine name when scripts/engine runs it (then a test may kill it). */
  nodes: Array<{ url: string; name?: string }>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The cluster, or null (then clusterMissing says why). */
    cluster: TestCluster | null;
    clusterMissing: string;
    engines: TestEngine[];
    /** Why there are no engines, when there are none (the tests are then skipped, outside CI). */
    enginesMissing: string;
  }
}
