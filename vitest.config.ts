import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 300_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/integration/**', '**/node_modules/**'] },
      },
      {
        // Real OpenSearch and Elasticsearch, found or started by test/setup/engines.ts (only when these
        // files are part of the run).
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: ['test/setup/engines.ts'] },
      },
    ],
  },
});
