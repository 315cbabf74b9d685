import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'billing-ops-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A CLI process, its output so far, and ways to wait on it. */
interface Running {
  readonly child: ChildProcessWithoutNullStreams;
  out(): string;
  /** Resolves with the first stdout line matching `pattern` (fails the test after 60 s). */
  line(pattern: RegExp): Promise<string>;
  exited(): Promise<number | null>;
}

function start(args: readonly string[], env: Record<string, string> = {}): Running {
  // `node --import tsx` rather than the tsx CLI, so that signals reach the CLI itself.
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bin/billing-engine.ts'), ...args], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: '',
      PORT: '',
      BILLING_HOST: '',
      BILLING_WORK_INTERVAL_MS: '',
      BILLING_WORK_BATCH_SIZE: '',
      BILLING_METRICS_PORT: '',
      BILLING_METRICS_TOKEN: '',
      LOG_FORMAT: 'json',
      LOG_LEVEL: '',
      ...env,
    },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    out: () => out,
    line: (pattern) =>
      new Promise<string>((resolve, reject) => {
        const look = () => {
          const found = out.split('\n').find((l) => pattern.test(l));
          if (found === undefined) return false;
          clearTimeout(timer);
          child.stdout.off('data', look);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => reject(new Error(`no line ${pattern} in:\n${out}\n${err}`)), 60_000);
        if (!look()) child.stdout.on('data', look);
      }),
    exited: () => exit,
  };
}

/** The JSON log lines of an output (the demo instructions are plain text for a person, not log lines). */
function logLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/**
 * A SQLite file with a backlog: 12 monthly subscriptions signed up on Jan 15 2026, so that by the
 * real clock (the CLI's) each has months of renewals and notices due.
 */
async function backlogDatabase(file: string): Promise<void> {
  const engine = createBillingEngine({
    storage: createSqliteStorage({ database: file }),
    clock: new ManualClock('2026-01-15T12:00:00Z'),
    gateway: createTestGateway(),
  });
  try {
    await engine.migrate();
    await engine.sites.create({ subdomain: 'busy', currency: 'USD', timeZone: 'UTC' });
    const site = engine.site('busy');
    const family = await site.catalog.createFamily({ name: 'Plans' });
    await site.catalog.createProduct(family.id, {
      name: 'Basic',
      handle: 'basic',
      priceInCents: 1000,
      interval: 1,
      intervalUnit: 'month',
    });
    for (let i = 0; i < 12; i++) {
      await site.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Busy', lastName: `Customer ${i}`, email: `busy${i}@example.com` },
        creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2040 },
      });
    }
  } finally {
    await engine.close();
  }
}

function dueWorkRows(file: string): { open: number; claimed: number } {
  const db = new Database(file, { readonly: true });
  try {
    const count = (where: string) =>
      (db.prepare(`select count(*) as n from due_work where ${where}`).get() as { n: number }).n;
    return { open: count(`status in ('pending', 'claimed')`), claimed: count(`status = 'claimed'`) };
  } finally {
    db.close();
  }
}

describe('graceful shutdown: the worker', () => {
  it('on SIGTERM mid-work finishes the batch in progress, leaves the rest pending, closes storage and exits 0', async () => {
    const file = join(dir, 'backlog.sqlite');
    await backlogDatabase(file);
    const before = dueWorkRows(file);
    expect(before.open).toBeGreaterThan(20);
    const worker = start(['worker', '--db', file, '--batch-size', '3', '--interval', '60000']);
    // The first batch is done (its line is written after the batch); later ones may be under way.
    await worker.line(/"msg":"renewed \d+/);
    worker.child.kill('SIGTERM');
    expect(await worker.exited()).toBe(0);
    const lines = logLines(worker.out());
    const messages = lines.map((l) => l.msg);
    expect(messages).toContain('SIGTERM: shutting down (send it again to exit at once)');
    expect(messages.at(-1)).toBe('worker stopped cleanly');
    // Every batch logged was at most 3 items, and no batch was cut short: nothing is left claimed,
    // and the backlog behind the last batch is still pending for the next worker.
    const batches = lines.filter((l) => typeof l.due_work === 'object') as { due_work: { processed: number } }[];
    expect(batches.length).toBeGreaterThanOrEqual(1);
    for (const batch of batches) expect(batch.due_work.processed).toBeLessThanOrEqual(3);
    const after = dueWorkRows(file);
    expect(after.claimed).toBe(0);
    expect(after.open).toBeGreaterThan(0);
  }, 120_000);
});

/** Connects to the server and sends a POST whose body is cut short, so that the request stays in flight. */
async function startSlowPost(port: number, apiKey: string, body: string): Promise<{ socket: Socket; rest: string }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const cut = Math.floor(body.length / 2);
  socket.write(
    [
      'POST /product_families.json HTTP/1.1',
      'Host: acme.localhost',
      `Authorization: Basic ${Buffer.from(`${apiKey}:x`).toString('base64')}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'X-Request-Id: slow-post',
      '',
      body.slice(0, cut),
    ].join('\r\n'),
  );
  return { socket, rest: body.slice(cut) };
}

async function startServer(): Promise<{ server: Running; port: number; apiKey: string }> {
  const server = start(['serve', '--db', ':memory:', '--port', '0', '--interval', '60000'], { LOG_LEVEL: 'debug' });
  const listening = await server.line(/"msg":"billing-engine on http:\/\/127\.0\.0\.1:\d+ /);
  const port = Number(/127\.0\.0\.1:(\d+)/.exec(listening)?.[1]);
  const apiKey = /API key:\s+(bk_\S+)/.exec(await server.line(/API key:/))?.[1];
  if (apiKey === undefined) throw new Error(`no demo API key in:\n${server.out()}`);
  return { server, port, apiKey };
}

describe('graceful shutdown: serve', () => {
  it('on SIGTERM stops accepting, answers the request in flight, then exits 0', async () => {
    const { server, port, apiKey } = await startServer();
    const body = JSON.stringify({ product_family: { name: 'Made during shutdown' } });
    const { socket, rest } = await startSlowPost(port, apiKey, body);
    let response = '';
    socket.on('data', (chunk: Buffer) => {
      response += chunk.toString();
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // The request has reached the app (its handler is waiting for the rest of the body).
    await server.line(/"request_id":"slow-post".*"msg":"request received"/);
    server.child.kill('SIGTERM');
    await server.line(/"msg":"SIGTERM: shutting down/);
    // No new connections once shutting down.
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    expect(server.child.exitCode).toBe(null);
    socket.write(rest);
    await closed;
    expect(response).toMatch(/^HTTP\/1\.1 201 /);
    expect(response).toContain('Made during shutdown');
    expect(await server.exited()).toBe(0);
    const lines = logLines(server.out());
    expect(lines.find((l) => l.request_id === 'slow-post' && l.msg === 'request')).toMatchObject({
      route: '/product_families.json',
      status: 201,
      site: 'acme',
    });
    expect(lines.at(-1)?.msg).toBe('stopped cleanly');
  }, 120_000);

  it('exits at once on a second signal, without waiting for the request in flight', async () => {
    const { server, port, apiKey } = await startServer();
    const { socket } = await startSlowPost(port, apiKey, JSON.stringify({ product_family: { name: 'Never' } }));
    await server.line(/"request_id":"slow-post".*"msg":"request received"/);
    server.child.kill('SIGTERM');
    await server.line(/"msg":"SIGTERM: shutting down/);
    server.child.kill('SIGINT');
    expect(await server.exited()).toBe(130);
    socket.destroy();
    const messages = logLines(server.out()).map((l) => l.msg);
    expect(messages).toContain('second SIGINT: exiting at once');
    expect(messages).not.toContain('stopped cleanly');
  }, 120_000);
});
