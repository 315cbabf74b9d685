/**
 * The per-request work of the HTTP binding made cheaper (issue 18) without changing what it
 * answers: the 405 check matches a path against the routes of its first segment only, the
 * request id goes onto the response in place instead of through a copy of the response, and the
 * logger censors secret fields one level down itself instead of through pino's wildcard paths.
 */
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import fc from 'fast-check';
import { Hono } from 'hono';
import { PatternRouter } from 'hono/router/pattern-router';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../examples/http/create-http-app.js';
import type { HttpAppEnv } from '../../examples/http/http-context.js';
import { REQUEST_ID_HEADER, requestMiddleware } from '../../examples/http/ops/http-ops.js';
import { createLogger, REDACT_PATHS, REDACTED } from '../../examples/http/ops/logger.js';
import { createOpsMetrics } from '../../examples/http/ops/metrics.js';
import { basic } from './support/client.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** A path that a route pattern matches: each parameter given a value its constraint accepts. */
function samplePath(pattern: string): string {
  return pattern
    .replaceAll(/:\w+\{\[\^\/\]\+\\\.(\w+)\}/g, '1.$1')
    .replaceAll(/:\w+\{\[0-9\]\+\}/g, '1')
    .replaceAll(/:\w+/g, '1')
    .replaceAll('*', 'x');
}

describe('405 with Allow', () => {
  it('names, for every route path, the methods a scan of the whole route table finds', async () => {
    const engine = createBillingEngine({
      storage: createMemoryStorage(),
      clock: new ManualClock('2026-01-15T12:00:00Z'),
      gateway: createTestGateway(),
    });
    const { apiKey } = await engine.sites.create({ subdomain: 'acme', currency: 'USD' });
    const app = createHttpApp({ engine, rateLimit: false });
    // The reference: every route of the table, as the check read it before it was indexed.
    const reference = new PatternRouter<string>();
    const paths = new Set<string>();
    for (const route of app.routes) {
      if (route.method === 'ALL') continue;
      reference.add(route.method, route.path, route.method);
      paths.add(samplePath(route.path));
    }
    paths.add('/');
    paths.add('/no_such_thing.json');
    paths.add('/subscriptions/1/no_such_thing.json');
    let checked = 0;
    for (const path of paths) {
      const allowed = METHODS.filter((method) => reference.match(method, path)[0].length > 0);
      for (const method of METHODS) {
        if (allowed.includes(method)) continue;
        const response = await app.request(`http://acme.localhost${path}`, {
          method,
          headers: { host: 'acme.localhost', authorization: basic(apiKey), 'content-type': 'application/json' },
          ...(method === 'GET' ? {} : { body: '{}' }),
        });
        // Other middleware may answer first (direct posts and hosted pages authenticate their own
        // way); whenever the check answers, a 405 names the reference's methods, and the 404 of an
        // unknown route comes only for a path no route of any method matches.
        if (response.status === 405) {
          expect(response.headers.get('allow'), `${method} ${path}`).toBe(allowed.join(', '));
          checked++;
        } else if (response.status === 404 && (await response.text()).includes('No route matches')) {
          expect(allowed, `${method} ${path}`).toEqual([]);
        }
      }
    }
    // Most paths take one or two methods: the others are hundreds of 405s.
    expect(checked).toBeGreaterThan(300);
  });
});

describe('the request id on the response', () => {
  function appWith(route: (app: Hono<HttpAppEnv>) => void): Hono<HttpAppEnv> {
    const app = new Hono<HttpAppEnv>();
    app.use('*', requestMiddleware(createOpsMetrics(), undefined));
    route(app);
    return app;
  }

  it('is set on the route’s response with its status, headers and body kept', async () => {
    const app = appWith((a) =>
      a.get('/thing.json', () => new Response('{"a":1}', { status: 201, headers: { 'x-other': 'kept' } })),
    );
    const response = await app.request('http://acme.localhost/thing.json', {
      headers: { [REQUEST_ID_HEADER]: 'req-1' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get(REQUEST_ID_HEADER)).toBe('req-1');
    expect(response.headers.get('x-other')).toBe('kept');
    expect(await response.text()).toBe('{"a":1}');
  });

  it('is set on a response whose headers cannot be changed, through a copy of it', async () => {
    const app = appWith((a) => a.get('/away', () => Response.redirect('http://elsewhere.example/', 302)));
    const response = await app.request('http://acme.localhost/away', { headers: { [REQUEST_ID_HEADER]: 'req-2' } });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('http://elsewhere.example/');
    expect(response.headers.get(REQUEST_ID_HEADER)).toBe('req-2');
  });

  it('replaces a request id that is not acceptable with a fresh one', async () => {
    const app = appWith((a) => a.get('/thing.json', () => new Response('{}')));
    const response = await app.request('http://acme.localhost/thing.json', {
      headers: { [REQUEST_ID_HEADER]: 'not acceptable' },
    });
    expect(response.headers.get(REQUEST_ID_HEADER)).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the logger’s redaction', () => {
  /** JSON lines written into an array, without the time (the two loggers take it at different moments). */
  function collect() {
    const lines: Record<string, unknown>[] = [];
    const destination = {
      write(line: string) {
        const { time: _time, ...rest } = JSON.parse(line) as Record<string, unknown>;
        lines.push(rest);
      },
    };
    return { lines, destination };
  }

  /**
   * The reference: pino given every path of REDACT_PATHS, the `*.field` wildcards included, as the
   * logger was configured before. Its string masking is left out: the values below hold no card
   * numbers or keys, so masking changes nothing in them.
   */
  function referenceLogger(destination: { write(line: string): void }) {
    return pino(
      {
        level: 'info',
        base: null,
        formatters: { level: (label) => ({ level: label }) },
        serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
        redact: { paths: [...REDACT_PATHS], censor: REDACTED },
      },
      destination,
    );
  }

  const SECRETS = ['authorization', 'password', 'apiKey', 'api_secret', 'token', 'cvv', 'cookie', 'sharedKey'];
  const key = fc.oneof(fc.constantFrom(...SECRETS, 'req', 'headers', 'site', 'id'), fc.stringMatching(/^[a-z]{1,6}$/));
  const text = fc.stringMatching(/^[a-zA-Z ]{0,12}$/);
  const value = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('node'), { maxLength: 3 }),
      fc.dictionary(key, tie('node'), { maxKeys: 4, noNullPrototype: true }),
    ),
  })).node;

  it('writes the same lines as pino with the wildcard paths, for any fields and child fields', () => {
    fc.assert(
      fc.property(
        fc.dictionary(key, value, { maxKeys: 6, noNullPrototype: true }),
        fc.dictionary(key, value, { maxKeys: 3, noNullPrototype: true }),
        (fields, bound) => {
          const ours = collect();
          const theirs = collect();
          createLogger({ format: 'json', destination: ours.destination }).info(fields, 'a line');
          referenceLogger(theirs.destination).info(fields, 'a line');
          createLogger({ format: 'json', destination: ours.destination }).child(bound).info(fields, 'child line');
          referenceLogger(theirs.destination).child(bound).info(fields, 'child line');
          // A child's child: the replaced methods are inherited.
          createLogger({ format: 'json', destination: ours.destination })
            .child({ id: 1 })
            .child(bound)
            .info(fields, 'grandchild line');
          referenceLogger(theirs.destination).child({ id: 1 }).child(bound).info(fields, 'grandchild line');
          expect(ours.lines).toEqual(theirs.lines);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('censors the secret fields of an error and leaves the caller’s objects as they were', () => {
    const ours = collect();
    const theirs = collect();
    const error = Object.assign(new Error('refused'), { token: 'tok-secret', code: 'E_REFUSED' });
    const user = { name: 'Ann', password: 'hunter2' };
    const fields = { err: error, user, req: { headers: { authorization: 'Basic x', accept: 'json' }, apiKey: 'k' } };
    createLogger({ format: 'json', destination: ours.destination }).error(fields, 'failed');
    referenceLogger(theirs.destination).error(fields, 'failed');
    expect(ours.lines).toEqual(theirs.lines);
    const line = ours.lines[0] ?? {};
    expect(line.err).toMatchObject({ token: REDACTED, code: 'E_REFUSED', message: 'refused' });
    expect(line.user).toEqual({ name: 'Ann', password: REDACTED });
    expect(line.req).toEqual({ headers: { authorization: REDACTED, accept: 'json' }, apiKey: REDACTED });
    expect(user.password).toBe('hunter2');
    expect(error.token).toBe('tok-secret');
  });
});
