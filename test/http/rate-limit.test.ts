import { beforeEach, describe, expect, it } from 'vitest';
import { createTokenBucket } from '../../examples/http/token-bucket.js';
import { useHttpFixture } from './support/http-fixture.js';

let now = 0;
beforeEach(() => {
  now = 0;
});

describe('HTTP rate limiting per API key', () => {
  const http = useHttpFixture({ rateLimit: { capacity: 3, refillPerSecond: 1, now: () => now } });
  const list = (site: 'acme' | 'globex' = 'acme', key?: string) =>
    http().as(site, { path: '/product_families.json', ...(key === undefined ? {} : { key }) });

  it('allows a burst of `capacity`, then answers 429 with Retry-After and a JSON body', async () => {
    for (let i = 0; i < 3; i++) expect((await list()).status).toBe(200);
    const limited = await list();
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(limited.json<{ errors: string[] }>().errors[0]).toMatch(
      /^Your request was denied due to a usage violation\./,
    );
  });

  it('refills at refillPerSecond on the injected clock, never above capacity', async () => {
    for (let i = 0; i < 3; i++) await list();
    now += 999;
    expect((await list()).status).toBe(429);
    now += 1;
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(429);
    now += 100_000;
    for (let i = 0; i < 3; i++) expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(429);
  });

  it('keeps one bucket per key: another site and another key of the same site are not limited', async () => {
    for (let i = 0; i < 4; i++) await list();
    expect((await list()).status).toBe(429);
    expect((await list('globex')).status).toBe(200);
    const second = await http().engine.sites.createApiKey('acme', 'second');
    expect((await list('acme', second.key)).status).toBe(200);
  });

  it('does not spend tokens on rejected credentials, which still get their 401', async () => {
    for (let i = 0; i < 5; i++) expect((await list('acme', 'wrong')).status).toBe(401);
    expect((await list()).status).toBe(200);
    for (let i = 0; i < 3; i++) await list();
    expect((await list('acme', 'wrong')).status).toBe(401);
  });
});

describe('HTTP rate limiting: slow refill', () => {
  const http = useHttpFixture({ rateLimit: { capacity: 1, refillPerSecond: 0.1, now: () => now } });

  it('Retry-After is the whole seconds until the next token', async () => {
    expect((await http().as('acme', { path: '/product_families.json' })).status).toBe(200);
    const limited = await http().as('acme', { path: '/product_families.json' });
    expect(limited.headers['retry-after']).toBe('10');
    now += 7_500;
    expect((await http().as('acme', { path: '/product_families.json' })).headers['retry-after']).toBe('3');
  });
});

describe('HTTP rate limiting: off', () => {
  const http = useHttpFixture({ rateLimit: false });

  it('never answers 429 when rateLimit is false', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 250; i++) statuses.add((await http().as('acme', { path: '/product_families.json' })).status);
    expect([...statuses]).toEqual([200]);
  });
});

describe('token bucket', () => {
  it('does not mint tokens when the clock steps back', () => {
    let t = 10_000;
    const bucket = createTokenBucket({ capacity: 2, refillPerSecond: 1, now: () => t });
    expect(bucket.take('k').allowed).toBe(true);
    expect(bucket.take('k').allowed).toBe(true);
    t = 0;
    expect(bucket.take('k').allowed).toBe(false);
  });

  it('forgets idle buckets, which then start full again', () => {
    let t = 0;
    const bucket = createTokenBucket({ capacity: 1, refillPerSecond: 1, now: () => t });
    expect(bucket.take('a').allowed).toBe(true);
    expect(bucket.take('a').allowed).toBe(false);
    t = 5_000;
    expect(bucket.take('b').allowed).toBe(true);
    expect(bucket.take('a').allowed).toBe(true);
    expect(bucket.take('a').allowed).toBe(false);
  });

  it('refuses nonsensical limits', () => {
    expect(() => createTokenBucket({ capacity: 0, refillPerSecond: 1 })).toThrow(RangeError);
    expect(() => createTokenBucket({ capacity: 1, refillPerSecond: 0 })).toThrow(RangeError);
  });
});
