import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBillingEngine } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'billing-cli-'));
const db = join(dir, 'cli.sqlite');

function cli(...args: string[]) {
  const result = spawnSync(
    process.execPath,
    [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'bin/billing-engine.ts'), ...args],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, DATABASE_URL: '' },
    },
  );
  return { code: result.status, out: result.stdout, err: result.stderr };
}

// The admin CLI as an operator runs it: a child process per command, on a SQLite file.
describe('admin CLI', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates a fresh database and an up-to-date one', () => {
    expect(cli('migrate', '--db', db)).toMatchObject({ code: 0, out: `migrated SQLite ${db}\n` });
    expect(cli('migrate', '--db', db).code).toBe(0);
  }, 90_000);

  it('creates a site and prints working credentials as JSON', async () => {
    const { code, out } = cli(
      'site',
      'create',
      '--db',
      db,
      '--subdomain',
      'shop',
      '--currency',
      'eur',
      '--time-zone',
      'Europe/Berlin',
      '--json',
    );
    expect(code).toBe(0);
    const created = JSON.parse(out);
    expect(created).toMatchObject({ subdomain: 'shop', mode: 'test' });
    expect(created.api_key).toMatch(/^bk_/);
    expect(Object.keys(created.direct)).toEqual(['api_id', 'api_secret', 'api_password']);
    const engine = createBillingEngine({ storage: createSqliteStorage({ database: db }) });
    try {
      const site = await engine.authenticate('shop', created.api_key);
      expect((await site.info()).currency).toBe('EUR');
      expect(
        (await engine.sites.authenticateDirect(created.direct.api_id, created.direct.api_password)).site.subdomain,
      ).toBe('shop');
    } finally {
      await engine.close();
    }
  }, 90_000);

  it('refuses bad input with the engine message and a non-zero exit, creating nothing', async () => {
    const bad = cli('site', 'create', '--db', db, '--subdomain', 'nope', '--currency', 'XYZ');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("Currency: 'XYZ' is not a supported ISO 4217 currency.");
    const missing = cli('site', 'create', '--db', db, '--currency', 'USD');
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain("required option '--subdomain <subdomain>' not specified");
    const engine = createBillingEngine({ storage: createSqliteStorage({ database: db }) });
    try {
      expect((await engine.sites.list()).map((s) => s.subdomain)).toEqual(['shop']);
    } finally {
      await engine.close();
    }
  }, 90_000);

  it('runs due work once with a summary line, and simulates a book of subscriptions', () => {
    const due = cli('run-due', '--db', db);
    expect(due.code).toBe(0);
    expect(due.out).toMatch(/^processed \d+, renewed 0, declined 0, failed 0, errors 0 in [\d.]+ s \(\d+\/s\)\n$/);
    const sim = cli('simulate', '--subscriptions', '20', '--months', '2');
    expect(sim.code).toBe(0);
    // 20 customers; every tenth card declines after signup, so dunning churns 2 of them.
    expect(sim.out).toMatch(
      /^20 subscriptions over 2 months: \d+ renewals, \d+ declines, revenue [\d.]+ USD, 2 churned, 18 active/,
    );
    expect(cli('run-due', '--db', db, '--until', 'not-a-date').code).not.toBe(0);
  }, 120_000);

  it('runs the worker until SIGTERM and then stops cleanly', async () => {
    // `node --import tsx` rather than the tsx CLI, so that SIGTERM reaches the worker itself.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'bin/billing-engine.ts'), 'worker', '--db', db, '--interval', '200'],
      {
        cwd: root,
        env: { ...process.env, DATABASE_URL: '' },
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const started = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 60_000);
      child.stdout.on('data', () => {
        if (out.includes('worker on')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
    });
    expect(started).toBe(true);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toContain('worker stopped cleanly');
  }, 120_000);
});
