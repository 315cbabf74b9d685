import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../examples/http/create-http-app.js';
import { createLogger, maskSecrets, REDACTED } from '../../examples/http/ops/logger.js';
import { tempDir } from '../support/sqlite.js';

const basic = (key: string) => `Basic ${Buffer.from(`${key}:x`).toString('base64')}`;

/** A logger writing JSON lines into an array, as the server writes them to stdout. */
function capturedLogger(level: 'info' | 'debug' = 'info') {
  const lines: string[] = [];
  const logger = createLogger({ level, format: 'json', destination: { write: (line: string) => lines.push(line) } });
  return { logger, lines, parsed: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

async function memoryEngine() {
  const engine = createBillingEngine({
    storage: createMemoryStorage(),
    clock: new ManualClock('2026-01-15T12:00:00Z'),
    gateway: createTestGateway(),
  });
  await engine.migrate();
  const { apiKey } = await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  return { engine, apiKey };
}

describe('ops: /healthz and /readyz', () => {
  it('are served without a site or key; readiness flips to 503 with a reason when the storage is closed', async () => {
    const { engine } = await memoryEngine();
    const app = createHttpApp({ engine, rateLimit: false });
    for (const host of [undefined, '127.0.0.1:3000', 'nosuchsite.localhost']) {
      const headers: Record<string, string> = host === undefined ? {} : { host };
      const health = await app.request('/healthz', { headers });
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await app.request('/readyz', { headers });
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
    }
    await engine.close();
    const ready = await app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'unavailable', reason: 'storage unreachable' });
    // Liveness does not depend on the storage: the process is up.
    expect((await app.request('/healthz')).status).toBe(200);
  });

  it('says the migrations are missing on a database nobody migrated, and not ready while draining', async () => {
    const dir = tempDir('billing-ops-');
    const storage = createSqliteStorage({ database: dir.file('unmigrated.sqlite') });
    const engine = createBillingEngine({ storage, gateway: createTestGateway() });
    let draining = false;
    const app = createHttpApp({ engine, rateLimit: false, ops: { draining: () => draining } });
    try {
      const before = await app.request('/readyz');
      expect(before.status).toBe(503);
      expect(await before.json()).toEqual({
        status: 'unavailable',
        reason: 'migrations not applied: run `billing-engine migrate`',
      });
      await engine.migrate();
      expect((await app.request('/readyz')).status).toBe(200);
      draining = true;
      const drained = await app.request('/readyz');
      expect(drained.status).toBe(503);
      expect(await drained.json()).toEqual({ status: 'unavailable', reason: 'shutting down' });
    } finally {
      await engine.close();
      dir.dispose();
    }
  });

  it('answer any host, key and query without a 5xx (a small fuzz of the public routes)', async () => {
    const { engine, apiKey } = await memoryEngine();
    const app = createHttpApp({ engine, rateLimit: false });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/healthz', '/readyz', '/metrics'),
        fc.constantFrom(undefined, 'acme.localhost', 'evil.localhost', '[::1]:80', '\u00e9.localhost'),
        fc.constantFrom(undefined, apiKey, 'wrong', ''),
        fc.array(fc.constantFrom('a=1', 'x', '%00', '%ff', 'card=4111111111111111'), { maxLength: 3 }),
        async (path, host, key, query) => {
          const headers: Record<string, string> = {};
          if (host !== undefined) headers.host = host;
          if (key !== undefined) headers.authorization = basic(key);
          const reply = await app.request(query.length === 0 ? path : `${path}?${query.join('&')}`, { headers });
          expect(reply.status).toBe(200);
        },
      ),
      { numRuns: 60 },
    );
    await engine.close();
  });
});

describe('ops: one structured log line per request, never a secret', () => {
  it('has request id, method, route, site, status and duration, and no card number or API key', async () => {
    const { engine, apiKey } = await memoryEngine();
    const { logger, lines, parsed } = capturedLogger();
    const app = createHttpApp({ engine, rateLimit: false, ops: { logger } });
    const card = '4111111111111111';
    const reply = await app.request(`/subscriptions.json?card_number=${card}&note=${encodeURIComponent(apiKey)}`, {
      method: 'POST',
      headers: {
        host: 'acme.localhost',
        authorization: basic(apiKey),
        'content-type': 'application/json',
        'x-request-id': 'req-abc-123',
      },
      body: JSON.stringify({
        subscription: {
          product_handle: 'no-such-product',
          customer_attributes: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
          credit_card_attributes: { full_number: card, expiration_month: '12', expiration_year: '2040' },
        },
      }),
    });
    expect(reply.status).toBe(422);
    // The caller's request id comes back and is the line's.
    expect(reply.headers.get('x-request-id')).toBe('req-abc-123');
    expect(lines).toHaveLength(1);
    const [line] = parsed();
    expect(line).toMatchObject({
      level: 'info',
      msg: 'request',
      request_id: 'req-abc-123',
      method: 'POST',
      route: '/subscriptions.json',
      site: 'acme',
      status: 422,
    });
    expect(typeof line?.duration_ms).toBe('number');
    expect(typeof line?.time).toBe('string');
    const text = lines.join('');
    expect(text).not.toContain(card);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(basic(apiKey));
    await engine.close();
  });

  it('replaces a request id it cannot trust with a new one, and logs an unexpected failure with it, masked', async () => {
    const { engine, apiKey } = await memoryEngine();
    const { logger, parsed } = capturedLogger();
    const card = '4111 1111 1111 1111';
    // A site handle that fails the way a bug would, with a card number and a key in its message.
    const failing = {
      ...engine,
      sites: Object.assign(Object.create(engine.sites), {
        authenticate: async () => {
          throw new Error(`boom near ${card} with ${apiKey}`);
        },
      }),
    };
    const app = createHttpApp({ engine: failing, rateLimit: false, ops: { logger } });
    const reply = await app.request('/product_families.json', {
      headers: { host: 'acme.localhost', authorization: basic(apiKey), 'x-request-id': 'bad id with spaces' },
    });
    expect(reply.status).toBe(500);
    const id = reply.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const lines = parsed();
    const failure = lines.find((l) => l.msg === 'unexpected failure');
    const request = lines.find((l) => l.msg === 'request');
    expect(failure).toMatchObject({ level: 'error', request_id: id });
    expect(request).toMatchObject({ level: 'error', request_id: id, status: 500, route: '/product_families.json' });
    const text = JSON.stringify(lines);
    expect(text).toContain('XXXX-XXXX-XXXX-1111');
    expect(text).not.toContain(card);
    expect(text).not.toContain(apiKey);
    await engine.close();
  });

  it('redacts secret fields by name and masks card numbers and keys in any string', () => {
    const { logger, lines } = capturedLogger();
    logger.info(
      {
        password: 'hunter2-password',
        headers: { authorization: 'Basic c2VjcmV0', cookie: 'session=1' },
        direct: { api_secret: 'the-direct-secret', signature: 'deadbeefsignature' },
        nested: { deeper: { text: 'card 5555-5555-5555-4444 here' } },
      },
      'paid with 4242424242424242',
    );
    const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(line.password).toBe(REDACTED);
    expect(line.headers).toEqual({ authorization: REDACTED, cookie: REDACTED });
    expect(line.direct).toEqual({ api_secret: REDACTED, signature: REDACTED });
    expect(line.nested).toEqual({ deeper: { text: 'card XXXX-XXXX-XXXX-4444 here' } });
    expect(line.msg).toBe('paid with XXXX-XXXX-XXXX-4242');
    // Numbers that are not card numbers (ids, amounts, timestamps) stay as they are.
    expect(maskSecrets('subscription 1234567890123 charged 4111111111111112')).toBe(
      'subscription 1234567890123 charged 4111111111111112',
    );
    expect(maskSecrets('key bk_0123abcd_0123456789abcdef0123456789abcdef0123456789abcdef')).toBe(
      `key bk_0123abcd_${REDACTED}`,
    );
  });

  it('writes nothing below LOG_LEVEL', () => {
    const { logger, lines } = capturedLogger();
    logger.debug('hidden');
    logger.info('shown');
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['shown']);
  });
});
