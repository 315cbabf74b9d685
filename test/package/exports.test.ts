import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = (file: string) =>
  JSON.parse(execFileSync(process.execPath, [file], { cwd: root, encoding: 'utf8' }).trim().split('\n').at(-1)!);

// The built package, imported by name from plain .mjs and .cjs files: a broken export map, a
// missing entry or a second copy of the core in an adapter bundle fails here.
describe('built package', () => {
  beforeAll(() => {
    // CI builds before testing; a newcomer's `npm test` builds here so the check always runs.
    if (process.env.CI !== 'true' || !existsSync(`${root}/dist/index.js`)) {
      execFileSync(process.execPath, [`${root}/node_modules/tsup/dist/cli-default.js`], { cwd: root, stdio: 'pipe' });
    }
  }, 180_000);

  const expected = { sameErrorClass: true, sqlite: 'function', postgres: 'function', conformance: 'function' };

  it('imports every subpath from ESM', () => {
    expect(run('test/package/import.mjs')).toEqual({ site: 'esm', ...expected });
  });

  it('requires every subpath from CommonJS', () => {
    expect(run('test/package/require.cjs')).toEqual({ site: 'cjs', ...expected });
  });

  it('ships type declarations for every subpath', () => {
    for (const entry of [
      'index',
      'testing/index',
      'adapters/memory/index',
      'adapters/sqlite/index',
      'adapters/postgres/index',
    ]) {
      expect(existsSync(`${root}/dist/${entry}.d.ts`), `${entry}.d.ts`).toBe(true);
      expect(existsSync(`${root}/dist/${entry}.d.cts`), `${entry}.d.cts`).toBe(true);
    }
  });
});
