import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // The package refers to itself by name (as a third-party adapter would); in a checkout that name is the source.
    alias: [
      { find: /^billing-engine\/testing$/, replacement: here('./src/testing/index.ts') },
      { find: /^billing-engine\/chargify$/, replacement: here('./src/chargify/index.ts') },
      { find: /^billing-engine\/http$/, replacement: here('./examples/http/index.ts') },
      { find: /^billing-engine\/gateways\/stripe$/, replacement: here('./gateways/stripe/index.ts') },
      { find: /^billing-engine\/adapters\/(memory|sqlite|postgres)$/, replacement: here('./adapters/$1/index.ts') },
      { find: /^billing-engine$/, replacement: here('./src/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/global-setup.ts'],
    setupFiles: ['./test/fast-check-seed.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
