import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBillingEngine, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'billing-cli-'));
const db = join(dir, 'cli.sqlite');

function cli(...args: string[]) {
  return cliWith({}, ...args);
}

function cliWith(env: Record<string, string>, ...args: string[]) {
  const result = spawnSync(
    process.execPath,
    [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'bin/billing-engine.ts'), ...args],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        ...process.env,
        DATABASE_URL: '',
        PORT: '',
        BILLING_COMPAT: '',
        BILLING_WORK_INTERVAL_MS: '',
        BILLING_ALLOW_LOCAL_WEBHOOKS: '',
        BILLING_PUBLIC_BASE_DOMAIN: '',
        ...env,
      },
    },
  );
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** The CLI failed with exactly this one line on stderr (no stack trace, no usage text) and exit 1. */
function expectOneLineError(result: ReturnType<typeof cli>, message: string) {
  expect(result.err).toBe(`error: ${message}\n`);
  expect(result.code).toBe(1);
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
    expect(due.out).toMatch(
      /^processed \d+, renewed 0, recovered 0, declined 0, failed 0, errors 0 in [\d.]+ s \(\d+\/s\)\n$/,
    );
    const sim = cli('simulate', '--subscriptions', '20', '--months', '2');
    expect(sim.code).toBe(0);
    // 20 customers; every tenth card declines after signup, so dunning churns 2 of them (customers
    // 9 and 19). Declines: 3 each (the failed renewal and the site's 2 retries, a day apart, then
    // the final action cancels) = 6. Renewals: the other 18 renew twice each in two months (basic:
    // Feb 1 and Mar 1; team: at the end of its 14-day trial, Jan 15, and Feb 15) = 36.
    // The count was 7 while runDue processed a claimed batch in order regardless of what the batch
    // scheduled: jumping the clock 30 days, customer 19's renewal:20:2 (Mar 1) was claimed with
    // dunning:20:1:1 (Feb 2) and charged before dunning:20:1:2 (Feb 3), scheduled by that retry,
    // ran and cancelled. runDue now hands a subject's later batch items back after work that
    // reschedules it, so a jump gives what small steps give.
    expect(sim.out).toMatch(
      /^20 subscriptions over 2 months: 36 renewals, 6 declines, revenue [\d.]+ USD, 2 churned, 18 active/,
    );
    expect(cli('run-due', '--db', db, '--until', 'not-a-date').code).not.toBe(0);
  }, 120_000);

  it('draws a progress bar with --progress bar (as on a terminal) and keeps the plain summary otherwise', async () => {
    // Three monthly subscriptions signed up on Jan 15: by Feb 20 each has had its renewal notice
    // (Feb 12) and renewed once (Feb 15), and the site has run its expiring-card scans of Jan 24,
    // Feb 1 and Feb 15: 9 items.
    const file = join(dir, 'progress.sqlite');
    const engine = createBillingEngine({
      storage: createSqliteStorage({ database: file }),
      clock: new ManualClock('2026-01-15T12:00:00Z'),
    });
    try {
      await engine.migrate();
      await engine.sites.create({ subdomain: 'bar', currency: 'USD', timeZone: 'UTC' });
      const site = engine.site('bar');
      const family = await site.catalog.createFamily({ name: 'Plans' });
      await site.catalog.createProduct(family.id, {
        name: 'Basic',
        handle: 'basic',
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
      });
      for (let i = 0; i < 3; i++) {
        await site.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'Bar', lastName: `Customer ${i}`, email: `bar${i}@example.com` },
          creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2040 },
        });
      }
    } finally {
      await engine.close();
    }
    // The same backlog twice: one run draws the bar, the other (stdout is a pipe) does not.
    const plainFile = join(dir, 'progress-plain.sqlite');
    copyFileSync(file, plainFile);
    const until = '2026-02-20T00:00:00Z';
    const summary = /^processed 9, renewed 3, recovered 0, declined 0, failed 0, errors 0 in [\d.]+ s \(\d+\/s\)$/;

    const plain = cli('run-due', '--db', plainFile, '--until', until);
    expect(plain.code).toBe(0);
    expect(plain.out).not.toContain('\r');
    expect(plain.out.split('\n')).toEqual([expect.stringMatching(summary), '']);

    const withBar = cli('run-due', '--db', file, '--until', until, '--progress', 'bar');
    expect(withBar.code).toBe(0);
    const [barLines, summaryLine, rest] = withBar.out.split('\n');
    expect(summaryLine).toMatch(summary);
    expect(rest).toBe('');
    // Each redraw starts with \r and ends by erasing the rest of the line (ESC [ K).
    const erase = '\u001b[K';
    const frames = (barLines ?? '').split('\r').slice(1);
    expect(frames.length).toBeGreaterThanOrEqual(1);
    for (const frame of frames) {
      expect(frame.endsWith(erase)).toBe(true);
      expect(frame).toMatch(/^\[[# -]{24}\] /);
    }
    // The total starts as what was due when the run began (3 notices, 3 renewals, the Jan 24
    // scan); the scans the run schedules as it goes take it to 9.
    expect(frames[0]).toMatch(/^\[[#-]{24}\] \d\/7 /);
    expect(frames.at(-1)?.slice(0, -erase.length)).toMatch(
      /^\[#{24}\] 9\/9 100% {2}\d+\/s {2}in \d+s {2}renewed 3 {2}declined 0 {2}failed 0 {2}errors 0$/,
    );
    expect(cli('run-due', '--db', file, '--progress', 'sometimes').code).not.toBe(0);
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

  it('prints its version', () => {
    const { code, out } = cli('--version');
    expect(code).toBe(0);
    expect(out).toBe(`${JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version}\n`);
  }, 90_000);
});

// Mistakes an operator makes: each is one line on stderr that says what is wrong and how to put it
// right, and exit code 1; none prints a stack trace or starts anything.
describe('admin CLI operator errors', () => {
  it('refuses a port that is already in use', async () => {
    const holder = createServer();
    const port = await new Promise<number>((resolve) =>
      holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port)),
    );
    try {
      expectOneLineError(
        cli('serve', '--db', ':memory:', '--port', String(port)),
        `port ${port} on 127.0.0.1 is already in use; stop the process using it or choose another port with --port or PORT.`,
      );
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 90_000);

  it('refuses an --until that is not an ISO 8601 instant', () => {
    for (const until of ['yesterday', '2026-13-45']) {
      expectOneLineError(
        cli('run-due', '--db', ':memory:', '--until', until),
        `--until "${until}" is not an ISO 8601 instant: give a date like 2026-02-01 or a time with a zone like 2026-02-01T00:00:00Z.`,
      );
    }
  }, 120_000);

  it('refuses a PORT that is not a port number', () => {
    expectOneLineError(
      cliWith({ PORT: 'abc' }, 'serve', '--db', ':memory:'),
      'PORT="abc" is not valid: expected a port number from 0 to 65535.',
    );
    expectOneLineError(
      cli('serve', '--db', ':memory:', '--port', '70000'),
      '--port "70000" is not valid: expected a port number from 0 to 65535.',
    );
  }, 90_000);

  it('refuses a --db path under a file', () => {
    const own = mkdtempSync(join(tmpdir(), 'billing-cli-db-'));
    const file = join(own, 'not-a-directory');
    writeFileSync(file, 'x');
    for (const command of [['migrate'], ['run-due']]) {
      expectOneLineError(
        cli(...command, '--db', join(file, 'sub', 'billing.sqlite')),
        `--db ${join(file, 'sub', 'billing.sqlite')}: ${file} is a file, not a directory; give a database path inside a directory (e.g. ./data/billing.sqlite).`,
      );
    }
    rmSync(own, { recursive: true, force: true });
  }, 90_000);

  it('refuses bad configuration values by the name the operator used', () => {
    expectOneLineError(
      cliWith({ BILLING_WORK_INTERVAL_MS: 'abc' }, 'serve', '--db', ':memory:'),
      'BILLING_WORK_INTERVAL_MS="abc" is not valid: expected a whole number of milliseconds from 10 to 86400000.',
    );
    expectOneLineError(
      cli('worker', '--db', ':memory:', '--interval', '0'),
      '--interval "0" is not valid: expected a whole number of milliseconds from 10 to 86400000.',
    );
    expectOneLineError(
      cli('serve', '--db', ':memory:', '--compat', 'bogus'),
      `--compat "bogus" is not valid: expected 'spec' or 'chargify'.`,
    );
    expectOneLineError(
      cliWith({ BILLING_COMPAT: 'Chargify2' }, 'serve', '--db', ':memory:'),
      `BILLING_COMPAT="Chargify2" is not valid: expected 'spec' or 'chargify'.`,
    );
    expectOneLineError(
      cliWith({ BILLING_ALLOW_LOCAL_WEBHOOKS: 'yes' }, 'deliver-webhooks', '--db', ':memory:'),
      `BILLING_ALLOW_LOCAL_WEBHOOKS="yes" is not valid: expected '1' or 'true' to allow, '0' or 'false' to refuse.`,
    );
  }, 120_000);
});
