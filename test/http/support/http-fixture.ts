import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import {
  type BillingEngine,
  type CreatedSite,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type Storage,
  type TestGateway,
  type WebhookServiceOptions,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import type { Hono } from 'hono';
import type pg from 'pg';
import { afterEach, beforeEach } from 'vitest';
import { createHttpApp, type HttpAppOptions } from '../../../examples/http/create-http-app.js';
import type { HttpAppEnv } from '../../../examples/http/http-context.js';
import { postgresTestServer, schemaStorage } from '../../support/postgres.js';
import { type TempDir, tempDir } from '../../support/sqlite.js';
import { basic, type HttpReply, type RawRequest, sendRaw } from './client.js';

/** A request to a site: JSON bodies are serialised and typed, the Host and key default to the site's. */
export interface SiteRequest {
  readonly method?: string;
  readonly path: string;
  readonly json?: unknown;
  readonly body?: string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
  /** Override the API key (default the site's own); `null` sends no Authorization header. */
  readonly key?: string | null;
  readonly host?: string;
}

/** The test's own access to the engine's Postgres schema. */
export interface PostgresAccess {
  readonly schema: string;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
}

/** A running server over a fresh engine with two sites, `acme` (New York, USD) and `globex` (UTC, EUR). */
export interface HttpFixture {
  readonly engine: BillingEngine;
  readonly clock: ManualClock;
  readonly gateway: TestGateway;
  readonly port: number;
  readonly keys: { readonly acme: string; readonly globex: string };
  /** The two sites as created (ids, API keys, shared keys). */
  readonly sites: { readonly acme: CreatedSite; readonly globex: CreatedSite };
  /** The app under test, e.g. for its route table (`app.routes`). */
  readonly app: Hono<HttpAppEnv>;
  /** The SQLite file behind the engine with `storage: 'sqlite-file'`; undefined on the default memory storage. */
  readonly databaseFile: string | undefined;
  /**
   * With `storage: 'postgres'`: the engine's schema, and SQL run through a connection of the test's
   * own (so that a test need not trust the engine's reads; schema-qualify names); undefined on the
   * other storages.
   */
  readonly postgres: PostgresAccess | undefined;
  /** Everything `logError` received. */
  readonly logged: unknown[];
  /** A request with nothing added. */
  raw(request: RawRequest): Promise<HttpReply>;
  /** A request as `site` (default `acme`), with its Host and key. */
  as(site: 'acme' | 'globex', request: SiteRequest): Promise<HttpReply>;
}

/** Test start instant: 07:00 in New York (UTC-5 in January). */
export const START = '2026-01-15T12:00:00Z';

/** Options of the fixture: the app's options, and a way to put a faulty engine in front of the real one. */
export interface HttpFixtureOptions extends Omit<HttpAppOptions, 'engine'> {
  /** The engine the app is given, made from the real one (default: the real one). */
  readonly wrapEngine?: (engine: BillingEngine) => BillingEngine;
  /**
   * Where the engine keeps its data: `memory` (default) or `sqlite-file`, a migrated SQLite file in
   * a temp directory (removed by `stop`) whose path is `fixture.databaseFile`, so that a test can
   * read the database through a connection of its own (see `support/db-dump.ts`), or `postgres`:
   * the test file's Postgres schema emptied (`BILLING_TEST_POSTGRES_URL`, else PGlite; see
   * test/support/postgres.ts), read through `fixture.postgres`. A file that uses `postgres` calls
   * `closePostgresTestServer` in its `afterAll`.
   */
  readonly storage?: 'memory' | 'sqlite-file' | 'postgres';
  /** The engine's webhook options (e.g. a `fetch` that never leaves the process); default none. */
  readonly webhooks?: WebhookServiceOptions;
}

/** Starts a server on an ephemeral loopback port; returns the fixture and a function that stops it. */
export async function startHttpFixture(
  options: HttpFixtureOptions = {},
): Promise<{ fixture: HttpFixture; stop: () => Promise<void> }> {
  const clock = new ManualClock(START);
  const gateway = createTestGateway();
  const { wrapEngine, storage: storageKind = 'memory', webhooks, ...appOptions } = options;
  let dir: TempDir | undefined;
  let storage: Storage;
  let databaseFile: string | undefined;
  let postgres: PostgresAccess | undefined;
  if (storageKind === 'sqlite-file') {
    dir = tempDir('billing-http-');
    databaseFile = dir.file('billing.sqlite');
    storage = createSqliteStorage({ database: databaseFile });
  } else if (storageKind === 'postgres') {
    const server = await postgresTestServer();
    const schema = await server.freshSchema();
    storage = (await schemaStorage(server, schema)).storage;
    postgres = {
      schema,
      query: async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
        (await server.query<R>(text, values)).rows,
    };
  } else {
    storage = createMemoryStorage();
  }
  const engine = createBillingEngine({ storage, clock, gateway, ...(webhooks === undefined ? {} : { webhooks }) });
  await engine.migrate();
  const acme = await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'America/New_York' });
  const globex = await engine.sites.create({ subdomain: 'globex', currency: 'EUR', timeZone: 'UTC' });
  const logged: unknown[] = [];
  // Portal links are made for a configured origin only: by default the one the tests send (the
  // site under localhost on the fixture's port, known once the server listens).
  let listeningPort = 0;
  const portalLinks = appOptions.portalLinks ?? {};
  const app = createHttpApp({
    engine: wrapEngine ? wrapEngine(engine) : engine,
    logError: (error) => logged.push(error),
    ...appOptions,
    portalLinks:
      portalLinks.baseUrl !== undefined || portalLinks.baseDomain !== undefined
        ? portalLinks
        : { ...portalLinks, baseUrl: (subdomain) => `http://${subdomain}.localhost:${listeningPort}` },
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address');
  const port = address.port;
  listeningPort = port;
  const keys = { acme: acme.apiKey, globex: globex.apiKey };

  const fixture: HttpFixture = {
    engine,
    clock,
    gateway,
    port,
    keys,
    sites: { acme, globex },
    app,
    databaseFile,
    postgres,
    logged,
    raw: (request) => sendRaw(port, request),
    as(site, request) {
      const key = request.key === undefined ? keys[site] : request.key;
      const headers: Record<string, string> = {
        host: request.host ?? `${site}.localhost:${port}`,
        accept: 'application/json',
      };
      if (key !== null) headers.authorization = basic(key);
      let body = request.body;
      if (request.json !== undefined) {
        body = JSON.stringify(request.json);
        headers['content-type'] = 'application/json';
      }
      return sendRaw(port, {
        method: request.method ?? 'GET',
        path: request.path,
        headers: { ...headers, ...request.headers },
        body,
      });
    },
  };
  const stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await engine.close();
    dir?.dispose();
  };
  return { fixture, stop };
}

/** Registers hooks that give every test its own server; returns a getter for the current fixture. */
export function useHttpFixture(options: HttpFixtureOptions = {}): () => HttpFixture {
  let current: { fixture: HttpFixture; stop: () => Promise<void> } | undefined;
  beforeEach(async () => {
    current = await startHttpFixture(options);
  });
  afterEach(async () => {
    const running = current;
    current = undefined;
    await running?.stop();
  });
  return () => {
    if (!current) throw new Error('HTTP fixture used outside a test');
    return current.fixture;
  };
}

/** A valid signup body for `product_handle` with a new customer and a Visa test card. */
export function signupBody(productHandle = 'pro', card: Record<string, unknown> = {}): unknown {
  return {
    subscription: {
      product_handle: productHandle,
      customer_attributes: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', reference: 'ada-1' },
      credit_card_attributes: {
        full_number: '4111111111111111',
        expiration_month: '12',
        expiration_year: '2030',
        cvv: '123',
        ...card,
      },
    },
  };
}

/** Creates the family `Acme Projects` and the product `pro` (10.00 a month) on a site through the engine. */
export async function seedCatalog(
  engine: BillingEngine,
  site = 'acme',
): Promise<{ familyId: number; productId: number }> {
  const handle = engine.site(site);
  const family = await handle.catalog.createFamily({ name: 'Acme Projects' });
  const product = await handle.catalog.createProduct(family.id, {
    name: 'Pro',
    handle: 'pro',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  return { familyId: family.id, productId: product.product.id };
}
