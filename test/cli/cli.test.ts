import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBillingEngine, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { closePostgresTestServer, POSTGRES_URL, postgresTestServer } from '../support/postgres.js';

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
        BILLING_HOST: '',
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
    // 20 customers, billed to Mar 1. Every tenth card declines after signup, so dunning churns 2
    // of them (customers 9 and 19): 3 declines each (the failed charge and the site's 2 retries, a
    // day apart, then the final action cancels). Customers 4 and 14 decline their Feb 1 renewal once
    // and the first retry collects it (2 declines, 2 recoveries, and a recovery is not a renewal).
    // Renewals: the other 16 renew twice each (Basic: Feb 1 and Mar 1; Team: at the end of its
    // 14-day trial, Jan 15, and Feb 15) = 32, plus the Mar 1 renewals of customers 4 and 14 = 34.
    // The month-by-month table follows the summary line, one row per month.
    expect(sim.out).toMatch(
      /^20 subscriptions over 2 months: 34 renewals, 8 declines, revenue [\d.]+ USD, 2 churned, 18 active/,
    );
    const table = sim.out.split('\n\n')[1]?.split('\n') ?? [];
    expect(table[0]).toMatch(/^Month\s+MRR\s+Active\s+New\s+Churned\s+Renewed\s+Declined\s+Recovered\s+Revenue$/);
    expect(
      table
        .slice(2)
        .filter(Boolean)
        .map((row) => row.split(/\s+/)[0]),
    ).toEqual(['2026-01', '2026-02']);
    const html = join(dir, 'report.html');
    const withChart = cli('simulate', '--subscriptions', '5', '--months', '1', '--growth', '2', '--html', html);
    expect(withChart.code).toBe(0);
    expect(readFileSync(html, 'utf8')).toMatch(/<svg[\s\S]*<polyline class="mrr"/);
    expect(cli('simulate', '--growth', '-1').code).not.toBe(0);
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

/** Runs `key`/`site` admin commands on `database` and checks what they do through the engine. */
async function manageSiteAndKeys(database: string, open: () => ReturnType<typeof createBillingEngine>) {
  const created = JSON.parse(
    cli('site', 'create', '--db', database, '--subdomain', 'keys', '--currency', 'usd', '--json').out,
  ) as { api_key: string; shared_key: string; direct: { api_id: string; api_password: string } };
  expect(cli('site', 'create', '--db', database, '--subdomain', 'other', '--currency', 'EUR', '--live').code).toBe(0);

  const listed = cli('site', 'list', '--db', database);
  expect(listed.code).toBe(0);
  expect(listed.out.split('\n').map((line) => line.split(/\s+/).filter(Boolean))).toEqual([
    ['SUBDOMAIN', 'CURRENCY', 'TIME', 'ZONE', 'MODE'],
    ['keys', 'USD', 'UTC', 'test'],
    ['other', 'EUR', 'UTC', 'live'],
    [],
  ]);
  const listedJson = JSON.parse(cli('site', 'list', '--db', database, '--json').out) as Record<string, unknown>[];
  expect(
    listedJson.map(({ subdomain, currency, time_zone, mode }) => ({ subdomain, currency, time_zone, mode })),
  ).toEqual([
    { subdomain: 'keys', currency: 'USD', time_zone: 'UTC', mode: 'test' },
    { subdomain: 'other', currency: 'EUR', time_zone: 'UTC', mode: 'live' },
  ]);
  const shown = cli('site', 'show', 'keys', '--db', database, '--json');
  expect(shown.code).toBe(0);
  expect(JSON.parse(shown.out)).toMatchObject({ subdomain: 'keys', currency: 'USD', mode: 'test', api_keys: 1 });
  // No command that reads a site prints a secret.
  expect(listed.out + shown.out + cli('site', 'show', 'keys', '--db', database).out).not.toContain(created.shared_key);

  const issued = JSON.parse(cli('key', 'issue', 'keys', '--db', database, '--name', 'ci', '--json').out) as {
    id: number;
    api_key: string;
    prefix: string;
  };
  expect(issued.api_key.startsWith(issued.prefix)).toBe(true);
  const keyList = cli('key', 'list', 'keys', '--db', database, '--json');
  expect(keyList.code).toBe(0);
  const keys = JSON.parse(keyList.out) as { id: number; name: string; prefix: string; created_at: string }[];
  expect(keys.map((k) => [k.name, k.prefix.length > 0, Number.isNaN(Date.parse(k.created_at))])).toEqual([
    ['default', true, false],
    ['ci', true, false],
  ]);
  expect(keys[1]?.id).toBe(issued.id);
  const keyTable = cli('key', 'list', 'keys', '--db', database).out;
  expect(keyTable).toContain(issued.prefix);
  for (const out of [keyList.out, keyTable]) {
    expect(out).not.toContain(issued.api_key);
    expect(out).not.toContain(created.api_key);
  }

  let engine = open();
  try {
    expect((await engine.authenticate('keys', issued.api_key)).subdomain).toBe('keys');
  } finally {
    await engine.close();
  }

  expect(cli('key', 'revoke', 'keys', String(issued.id), '--db', database)).toMatchObject({
    code: 0,
    out: `api key ${issued.id} of keys revoked\n`,
  });
  // Revoking again, an id of no key, or a key of another site: one line, exit 1.
  expectOneLineError(
    cli('key', 'revoke', 'keys', String(issued.id), '--db', database),
    `site 'keys' has no active API key ${issued.id}; \`key list keys\` shows its keys.`,
  );
  expectOneLineError(
    cli('key', 'revoke', 'other', String(keys[0]?.id), '--db', database),
    `site 'other' has no active API key ${keys[0]?.id}; \`key list other\` shows its keys.`,
  );
  expectOneLineError(cli('key', 'issue', 'nosuch', '--db', database), "Site 'nosuch' not found.");
  expectOneLineError(cli('key', 'revoke', 'nosuch', '1', '--db', database), "Site 'nosuch' not found.");
  expectOneLineError(cli('site', 'show', 'nosuch', '--db', database), "Site 'nosuch' not found.");
  expectOneLineError(cli('site', 'rotate-direct', 'nosuch', '--db', database), "Site 'nosuch' not found.");

  const shared = JSON.parse(cli('site', 'rotate-shared-key', 'keys', '--db', database, '--json').out) as {
    shared_key: string;
  };
  const direct = JSON.parse(cli('site', 'rotate-direct', 'keys', '--db', database, '--json').out) as {
    direct: { api_id: string; api_secret: string; api_password: string };
  };
  expect(shared.shared_key).not.toBe(created.shared_key);
  expect(direct.direct.api_id).not.toBe(created.direct.api_id);

  engine = open();
  try {
    await expect(engine.authenticate('keys', issued.api_key)).rejects.toMatchObject({ code: 'unauthorized' });
    // The key the site was created with is untouched by revoking another.
    expect((await engine.authenticate('keys', created.api_key)).subdomain).toBe('keys');
    expect((await engine.sites.get('keys')).sharedKey).toBe(shared.shared_key);
    const now = await engine.sites.authenticateDirect(direct.direct.api_id, direct.direct.api_password);
    expect(now).toMatchObject({ apiId: direct.direct.api_id, apiSecret: direct.direct.api_secret });
    await expect(
      engine.sites.authenticateDirect(created.direct.api_id, created.direct.api_password),
    ).rejects.toMatchObject({ code: 'unauthorized' });
  } finally {
    await engine.close();
  }
  expect(JSON.parse(cli('key', 'list', 'keys', '--db', database, '--json').out)).toHaveLength(1);
}

// Sites and keys from the CLI: a lost key is a new key, not a new database.
describe('admin CLI: sites and keys', () => {
  const own = mkdtempSync(join(tmpdir(), 'billing-cli-keys-'));
  afterAll(() => rmSync(own, { recursive: true, force: true }));

  it('lists and shows sites, issues, lists and revokes keys, and rotates secrets on SQLite', async () => {
    const file = join(own, 'keys.sqlite');
    await manageSiteAndKeys(file, () => createBillingEngine({ storage: createSqliteStorage({ database: file }) }));
  }, 240_000);

  it('refuses a key id that is not a number before opening anything', () => {
    const result = cli('key', 'revoke', 'keys', 'abc', '--db', join(own, 'never.sqlite'));
    expect(result.code).toBe(1);
    expect(result.err).toContain("error: command-argument value 'abc' is invalid for argument 'keyId'.");
  }, 90_000);
});

if (POSTGRES_URL === undefined) {
  console.log('admin CLI on Postgres: skipped, BILLING_TEST_POSTGRES_URL is not set (the CLI takes a postgres:// URL)');
}

describe.skipIf(POSTGRES_URL === undefined)('admin CLI: sites and keys on Postgres', () => {
  afterAll(() => closePostgresTestServer());

  it('does the same on a Postgres schema of its own', async () => {
    const server = await postgresTestServer();
    const schema = await server.newSchema();
    // The schema goes in the URL (`?schema=`; the default is `billing`), as an operator would.
    const url = new URL(POSTGRES_URL ?? '');
    url.searchParams.set('schema', schema);
    const pg = (await import('pg')).default;
    const { createPostgresStorage } = await import('billing-engine/adapters/postgres');
    await manageSiteAndKeys(url.toString(), () =>
      createBillingEngine({ storage: createPostgresStorage({ pool: new pg.Pool(server.poolConfig(schema)), schema }) }),
    );
    // The commands wrote to that schema, not elsewhere.
    const rows = await server.query<{ subdomain: string }>(
      `select subdomain from ${pg.escapeIdentifier(schema)}.sites order by id`,
    );
    expect(rows.rows.map((r) => r.subdomain)).toEqual(['keys', 'other']);
  }, 240_000);
});

// `serve --host`: the address it binds, loopback unless told otherwise.
describe('admin CLI: serve --host', () => {
  it('listens on the address given and not on the default loopback address', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'bin/billing-engine.ts'),
        'serve',
        '--db',
        ':memory:',
        '--port',
        '0',
        '--host',
        '127.0.0.2',
      ],
      { cwd: root, env: { ...process.env, DATABASE_URL: '', PORT: '', BILLING_HOST: '' } },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    try {
      const port = await new Promise<number | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(undefined), 60_000);
        child.stdout.on('data', () => {
          const match = /billing-engine on http:\/\/127\.0\.0\.2:(\d+) /.exec(out);
          if (match) {
            clearTimeout(timer);
            resolve(Number(match[1]));
          }
        });
      });
      expect(port, out).toBeGreaterThan(0);
      const root = await fetch(`http://127.0.0.2:${port}/`);
      expect(root.status).toBe(200);
      expect(((await root.json()) as { service: string }).service).toBe('billing-engine');
      await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('exit', resolve));
    }
  }, 90_000);

  it('refuses a BILLING_HOST or --host that is not an address', () => {
    expectOneLineError(
      cliWith({ BILLING_HOST: 'example.com' }, 'serve', '--db', ':memory:'),
      'BILLING_HOST="example.com" is not valid: expected an IPv4 or IPv6 address (127.0.0.1, 0.0.0.0, ::) or localhost.',
    );
    expectOneLineError(
      cli('serve', '--db', ':memory:', '--host', '0.0.0.0:80'),
      '--host "0.0.0.0:80" is not valid: expected an IPv4 or IPv6 address (127.0.0.1, 0.0.0.0, ::) or localhost.',
    );
  }, 90_000);
});
