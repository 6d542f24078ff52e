// Runs a block of integration tests once per real engine that test/setup/engines.ts found (the smoke
// subset on every engine, the rest on those that run the full suite), each with a connected client, unique
// index names and cleanup. Use it for every test that talks to a cluster:
//
//   forEachEngine('annotate', (ctx) => {
//     it('writes signatures', async () => {
//       const index = ctx.index('docs');            // unique, deleted after the block
//       await ctx.client.createIndex(index);
//       ...
//     });
//   });
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { connectionArgsFrom } from '../../src/cli/connection-options.js';
import type { ConnectionOptions } from '../../src/engine/connection.js';
import { connect, type EngineClient } from '../../src/engine/client.js';
import type { TestEngine } from '../setup/engine-types.js';

export type { TestEngine };

export interface EngineContext {
  readonly engine: TestEngine;
  /** Connected in beforeAll; use it inside tests and hooks. */
  readonly client: EngineClient;
  /** Connection options for this engine (credentials from SEARCH_* for explicit URLs), e.g. for CLI args. */
  readonly connection: ConnectionOptions;
  /** A new unique index name (lowercase), deleted after the block. */
  index(label?: string): string;
  /** A unique name for other things (templates); clean them up with `cleanup`. */
  name(label?: string): string;
  /** Runs after the block, before the client closes. */
  cleanup(step: () => Promise<unknown>): void;
}

let counter = 0;

export function uniqueName(label = 'test'): string {
  const slug = label.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'test';
  return `nd-test-${slug}-${process.pid}-${++counter}-${randomBytes(3).toString('hex')}`;
}

export function testEngines(): TestEngine[] {
  return inject('engines');
}

/**
 * A block of tests once per engine. By default only on the engines that run the full suite (the newest
 * major of each flavour); `{ smoke: true }` marks a block of the smoke subset, which runs on every engine.
 */
export function forEachEngine(title: string, body: (ctx: EngineContext) => void, options: { smoke?: boolean } = {}): void {
  const found = testEngines();
  const engines = options.smoke ? found : found.filter((e) => e.suite === 'full');
  if (engines.length === 0) {
    describe.skip(`${title} [no engine: ${inject('enginesMissing') || 'none found'}]`, () => {
      it('needs a real OpenSearch or Elasticsearch', () => undefined);
    });
    return;
  }
  describe.each(engines.map((engine) => [`${engine.flavour} ${engine.version}`, engine] as const))(`${title} on %s`, (_label, engine) => {
    let client: EngineClient | undefined;
    const indices: string[] = [];
    const steps: Array<() => Promise<unknown>> = [];
    const connection: ConnectionOptions = { ...connectionArgsFrom({}), url: engine.url };
    const ctx: EngineContext = {
      engine,
      connection,
      get client(): EngineClient {
        if (!client) throw new Error('ctx.client is connected in beforeAll: use it inside tests and hooks');
        return client;
      },
      index(label) {
        const name = uniqueName(label);
        indices.push(name);
        return name;
      },
      name: uniqueName,
      cleanup(step) {
        steps.push(step);
      },
    };
    beforeAll(async () => {
      client = await connect(connection);
    });
    afterAll(async () => {
      if (!client) return;
      for (const step of steps.reverse()) await step().catch(() => undefined);
      for (const index of indices) await client.deleteIndex(index).catch(() => undefined);
      await client.close();
    });
    body(ctx);
  });
}

/**
 * A data stream as users make one (an index template with `data_stream: {}` over the stream's name, a `text`
 * field, and `settings` when given), its name given back; deleted after the block, the stream before its
 * template (an engine keeps a template that a stream uses).
 */
export async function dataStream(ctx: EngineContext, label: string, options: { priority: number; settings?: Record<string, unknown> }): Promise<string> {
  const stream = ctx.name(label);
  const template = ctx.name(`${label}-template`);
  const settings = options.settings ? { settings: options.settings } : {};
  await ctx.client.putIndexTemplate(template, { index_patterns: [`${stream}*`], data_stream: {}, priority: options.priority, template: { ...settings, mappings: { properties: { text: { type: 'text' } } } } });
  // Run in reverse order after the block: the stream first.
  ctx.cleanup(() => ctx.client.request('DELETE', `/_index_template/${template}`));
  ctx.cleanup(() => ctx.client.request('DELETE', `/_data_stream/${stream}`));
  return stream;
}
