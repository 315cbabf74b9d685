import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = (file: string) =>
  JSON.parse(execFileSync(process.execPath, [file], { cwd: root, encoding: 'utf8' }).trim().split('\n').at(-1)!);

// The built package, imported by name from plain .mjs and .cjs files: a broken export map, a
// missing entry or a second copy of the core in an adapter bundle fails here.
// One build for both describes of this file (two test files building dist/ at once would race).
beforeAll(() => {
  // CI builds before testing; a newcomer's `npm test` builds here so the check always runs.
  if (process.env.CI !== 'true' || !existsSync(`${root}/dist/index.js`)) {
    execFileSync(process.execPath, [`${root}/node_modules/tsup/dist/cli-default.js`], { cwd: root, stdio: 'pipe' });
  }
}, 600_000);

describe('built package', () => {
  const expected = {
    sameErrorClass: true,
    chargifySameErrorClass: true,
    sqlite: 'function',
    postgres: 'function',
    conformance: 'function',
  };

  it('imports every subpath from ESM', () => {
    expect(run('test/package/import.mjs')).toEqual({ site: 'esm', ...expected });
  });

  it('requires every subpath from CommonJS', () => {
    expect(run('test/package/require.cjs')).toEqual({ site: 'cjs', ...expected });
  });

  it('ships type declarations for every subpath', () => {
    for (const entry of [
      'index',
      'chargify/index',
      'http/index',
      'gateways/stripe/index',
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

// The packed tarball installed into a fresh app, as an adopter gets it: `npm pack`, then `npm install
// <tarball>` from the local npm cache (the registry only for what the cache lacks). The optional
// peers come from this checkout's node_modules by symlink, one at a time, so that the app first
// runs without them. Nothing here can see the checkout's sources or its vitest aliases.
describe('installed package', () => {
  const work = mkdtempSync(join(tmpdir(), 'billing-installed-'));
  const app = join(work, 'app');
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version as string;
  const node = (...args: string[]) => {
    const result = spawnSync(process.execPath, args, { cwd: app, encoding: 'utf8', timeout: 120_000 });
    return { code: result.status, out: result.stdout, err: result.stderr };
  };
  const json = (file: string) => {
    const result = node(file);
    expect(result.code, result.err).toBe(0);
    return JSON.parse(result.out.trim().split('\n').at(-1)!);
  };
  const cli = (...args: string[]) => node(join(app, 'node_modules/billing-engine/dist/bin/billing-engine.js'), ...args);
  const linkPeer = (name: string) => {
    const target = join(app, 'node_modules', name);
    if (!existsSync(target)) symlinkSync(join(root, 'node_modules', name), target, 'dir');
  };

  beforeAll(() => {
    const npm = (...args: string[]) =>
      execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
        cwd: app,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'adopter-app', private: true }));
    const tarball = npm('pack', root, '--pack-destination', work).trim().split('\n').at(-1)!;
    npm('install', '--no-save', '--prefer-offline', '--ignore-scripts', join(work, tarball));
    for (const file of [
      'import.mjs',
      'require.cjs',
      'conformance.mjs',
      'sqlite-without-driver.mjs',
      'sqlite-without-kysely.mjs',
      'root-without-optional.mjs',
      'mount-http.mjs',
      'mount-http.cjs',
    ]) {
      cpSync(join(root, 'test/package', file), join(app, file));
    }
  }, 300_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('names kysely when an adapter is loaded without it, from ESM and CommonJS', () => {
    expect(existsSync(join(app, 'node_modules/kysely'))).toBe(false);
    const hint = {
      code: 'storage',
      message:
        'billing-engine/adapters/sqlite and billing-engine/adapters/postgres need the package kysely, which is not installed: install kysely (npm install kysely).',
    };
    expect(json('sqlite-without-kysely.mjs')).toEqual({
      sqliteImport: hint,
      sqliteRequire: hint,
      postgresImport: hint,
      postgresRequire: hint,
    });
  }, 120_000);

  it('loads the root and the wire format without the packages only the HTTP binding and the CLI use', () => {
    const blocked = [
      'hono',
      '@hono/node-server',
      'commander',
      'prom-client',
      'pino',
      'pino-pretty',
      'pdfkit',
      'stripe',
    ];
    expect(json('root-without-optional.mjs')).toEqual({
      blockedForImport: blocked,
      blockedForRequire: blocked,
      esm: 'plain',
      cjs: 'plain',
      chargifyEsm: 'function',
      chargifyCjs: 'function',
    });
  }, 120_000);

  it('mounts billing-engine/http in a plain Node server and in Express, from ESM and CommonJS', () => {
    linkPeer('express');
    const answered = { status: 200, names: ['Plans'] };
    expect(json('mount-http.mjs')).toEqual({ module: 'esm', node: answered, express: answered });
    expect(json('mount-http.cjs')).toEqual({ module: 'cjs', node: answered, express: answered });
  }, 120_000);

  it('runs the CLI without the optional peers, and names the driver package a URL needs', () => {
    linkPeer('kysely');
    expect(existsSync(join(app, 'node_modules/pg'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/better-sqlite3'))).toBe(false);
    const help = cli('--help');
    expect(help.code, help.err).toBe(0);
    expect(help.out).toMatch(/^Usage: billing-engine /);
    expect(help.out).toContain('run-due');
    expect(cli('--version')).toMatchObject({ code: 0, out: `${version}\n` });
    expect(cli('migrate', '--db', 'postgres://nobody@127.0.0.1:1/none')).toMatchObject({
      code: 1,
      err: "error: a postgres:// database needs the package 'pg', which is not installed: run npm install pg kysely\n",
    });
    expect(json('sqlite-without-driver.mjs')).toEqual({
      code: 'storage',
      message:
        'billing-engine/adapters/sqlite needs the package better-sqlite3, which is not installed: install better-sqlite3 (npm install better-sqlite3).',
    });
  }, 120_000);

  it('passes the shipped conformance suite on the shipped SQLite adapter', () => {
    linkPeer('kysely');
    linkPeer('better-sqlite3');
    const result = json('conformance.mjs');
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.passed).toBeGreaterThanOrEqual(100);
  }, 180_000);

  it('imports the package from ESM and requires it from CommonJS', () => {
    linkPeer('kysely');
    linkPeer('better-sqlite3');
    const expected = {
      sameErrorClass: true,
      chargifySameErrorClass: true,
      sqlite: 'function',
      postgres: 'function',
      conformance: 'function',
    };
    expect(json('import.mjs')).toEqual({ site: 'esm', ...expected });
    expect(json('require.cjs')).toEqual({ site: 'cjs', ...expected });
  }, 120_000);
});
