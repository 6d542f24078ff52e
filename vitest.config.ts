import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 300_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/integration/**', 'test/secured/**', '**/node_modules/**'] },
      },
      {
        // Real OpenSearch and Elasticsearch, found or started by test/setup/engines.ts (only when these
        // files are part of the run).
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: ['test/setup/engines.ts'] },
      },
      {
        // A real OpenSearch with its security plugin (TLS, users, the near_dup role), found or started by
        // test/secured/setup.ts (only when these files are part of the run).
        extends: true,
        // Each test runs the CLI (a process per command) beside every other engine on CI's 2 cores.
        test: { name: 'secured', include: ['test/secured/**/*.test.ts'], globalSetup: ['test/secured/setup.ts'], testTimeout: 180_000 },
      },
    ],
  },
});
