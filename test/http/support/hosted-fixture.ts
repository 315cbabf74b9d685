import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import {
  type BillingEngine,
  type CreatedSite,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type SubscriptionView,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { afterEach, beforeEach } from 'vitest';
import { createHttpApp } from '../../../examples/http/create-http-app.js';
import { createMerchantDemoApp } from '../../../examples/http/merchant-demo.js';
import type { HostedRoutesOptions } from '../../../examples/http/routes/hosted-routes.js';
import type { PortalLinkRoutesOptions } from '../../../examples/http/routes/portal-link-routes.js';
import { basic, type HttpReply, sendRaw } from './client.js';
import { START } from './http-fixture.js';

/** Ids of what {@link startHostedFixture} puts in acme's catalog. */
export interface HostedCatalog {
  readonly familyId: number;
  /** `basic` (5.00), `pro` (10.00) and `premium` (25.00) a month, one family. */
  readonly products: { readonly basic: number; readonly pro: number; readonly premium: number };
  /** `enterprise`, in another family: never a plan-change target of the others. */
  readonly otherFamilyProduct: number;
  /** Quantity-based `seats` (2.00 each) and on/off `support` (5.00), in the plans' family. */
  readonly components: { readonly seats: number; readonly support: number };
}

/** A page request as a browser sends it: the site's Host, no API key, an optional form and cookie. */
export interface PageRequest {
  readonly method?: string;
  readonly form?: Readonly<Record<string, string>> | readonly (readonly [string, string])[];
  readonly cookie?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Override the Host (default `{site}.localhost:{port}`). */
  readonly host?: string;
}

/** A running server with hosted pages, the main API, direct post and (optionally) the demo merchant. */
export interface HostedFixture {
  readonly engine: BillingEngine;
  readonly clock: ManualClock;
  readonly port: number;
  readonly sites: { readonly acme: CreatedSite; readonly globex: CreatedSite };
  readonly catalog: HostedCatalog;
  /** Everything the apps' `logError` received. */
  readonly logged: unknown[];
  /** The demo merchant app's own origin (`http://127.0.0.1:{port}`), when started. */
  readonly demoOrigin: string | undefined;
  /** `http://{site}.localhost:{port}`: the origin a browser opens the site's pages at. */
  origin(site: 'acme' | 'globex'): string;
  /** A page request to a site. */
  page(site: 'acme' | 'globex', path: string, request?: PageRequest): Promise<HttpReply>;
  /** A main-API GET with the site's API key. */
  api(site: 'acme' | 'globex', path: string, key?: string): Promise<HttpReply>;
  /** Signs `productHandle` up for a new customer through the engine, with a good Visa card. */
  subscribe(site: 'acme' | 'globex', productHandle: string, email?: string): Promise<SubscriptionView>;
}

/** Options of {@link startHostedFixture}. */
export interface HostedFixtureOptions {
  readonly hosted?: HostedRoutesOptions;
  readonly portalLink?: PortalLinkRoutesOptions;
  /** Also serve the demo merchant pages, on their own port, with acme's direct credentials. */
  readonly demo?: boolean;
}

async function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<Server> {
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  return server;
}

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address');
  return address.port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function seed(engine: BillingEngine): Promise<HostedCatalog> {
  const acme = engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Acme Projects' });
  const product = async (familyId: number, handle: string, name: string, priceInCents: number) =>
    (await acme.catalog.createProduct(familyId, { name, handle, priceInCents, interval: 1, intervalUnit: 'month' }))
      .product.id;
  const basicId = await product(family.id, 'basic', 'Basic', 500);
  const proId = await product(family.id, 'pro', 'Pro', 1000);
  const premiumId = await product(family.id, 'premium', 'Premium', 2500);
  const other = await acme.catalog.createFamily({ name: 'Enterprise Deals' });
  const enterpriseId = await product(other.id, 'enterprise', 'Enterprise', 90000);
  const seats = await acme.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '2',
  });
  const support = await acme.components.create(family.id, {
    name: 'Priority support',
    kind: 'on_off',
    handle: 'support',
    unitPrice: '5',
  });
  const globex = engine.site('globex');
  const globexFamily = await globex.catalog.createFamily({ name: 'Globex Plans' });
  await globex.catalog.createProduct(globexFamily.id, {
    name: 'Pro',
    handle: 'pro',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  return {
    familyId: family.id,
    products: { basic: basicId, pro: proId, premium: premiumId },
    otherFamilyProduct: enterpriseId,
    components: { seats: seats.component.id, support: support.component.id },
  };
}

/**
 * Starts the example server as `create-http-app.ts` will compose it once the hosted routes are
 * registered: hosted pages first (no API key), then the whole app (key middleware, main API,
 * direct post), then the management-link route behind the key middleware. Two sites: `acme`
 * (New York, USD, with the catalog of {@link HostedCatalog}) and `globex` (UTC, EUR, product `pro`).
 */
export async function startHostedFixture(
  options: HostedFixtureOptions = {},
): Promise<{ fixture: HostedFixture; stop: () => Promise<void> }> {
  const clock = new ManualClock(START);
  const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway: createTestGateway() });
  await engine.migrate();
  const acme = await engine.sites.create({
    subdomain: 'acme',
    name: 'Acme Software',
    currency: 'USD',
    timeZone: 'America/New_York',
  });
  const globex = await engine.sites.create({ subdomain: 'globex', name: 'Globex', currency: 'EUR', timeZone: 'UTC' });
  const catalog = await seed(engine);
  const logged: unknown[] = [];
  const logError = (error: unknown) => logged.push(error);

  // Portal links are made for a configured origin only: by default the one a browser opens the
  // site's pages at (the site under localhost on the fixture's port, known once the server listens).
  let listeningPort = 0;
  const portalLinks = options.portalLink ?? {};
  const app = createHttpApp({
    engine,
    logError,
    rateLimit: false,
    ...(options.hosted === undefined ? {} : { hosted: options.hosted }),
    portalLinks:
      portalLinks.baseUrl !== undefined || portalLinks.baseDomain !== undefined
        ? portalLinks
        : { ...portalLinks, baseUrl: (subdomain) => `http://${subdomain}.localhost:${listeningPort}` },
  });
  const server = await listen(app.fetch);
  const port = portOf(server);
  listeningPort = port;

  let demoServer: Server | undefined;
  if (options.demo) {
    // The demo merchant is its own server, as a merchant's site would be: another origin. Its
    // return URL names its own port, so the app is made once the server listens.
    let demoFetch: ((request: Request) => Response | Promise<Response>) | undefined;
    demoServer = await listen((request) =>
      demoFetch ? demoFetch(request) : new Response('starting', { status: 503 }),
    );
    demoFetch = createMerchantDemoApp({
      apiId: acme.direct.apiId,
      apiSecret: acme.direct.apiSecret,
      apiPassword: acme.direct.apiPassword,
      directUrl: `http://127.0.0.1:${port}`,
      returnUrl: `http://127.0.0.1:${portOf(demoServer)}/demo/return`,
      productHandle: 'pro',
      now: () => clock.now(),
    }).fetch;
  }
  const demoOrigin = demoServer === undefined ? undefined : `http://127.0.0.1:${portOf(demoServer)}`;

  const origin = (site: 'acme' | 'globex') => `http://${site}.localhost:${port}`;
  const fixture: HostedFixture = {
    engine,
    clock,
    port,
    sites: { acme, globex },
    catalog,
    logged,
    demoOrigin,
    origin,
    page(site, path, request = {}) {
      const headers: Record<string, string> = {
        host: request.host ?? `${site}.localhost:${port}`,
        accept: 'text/html',
      };
      let body: string | undefined;
      if (request.form !== undefined) {
        const pairs = Array.isArray(request.form) ? request.form : Object.entries(request.form);
        body = new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, v])).toString();
        headers['content-type'] = 'application/x-www-form-urlencoded';
      }
      if (request.cookie !== undefined) headers.cookie = request.cookie;
      return sendRaw(port, {
        method: request.method ?? (body === undefined ? 'GET' : 'POST'),
        path,
        headers: { ...headers, ...request.headers },
        ...(body === undefined ? {} : { body }),
      });
    },
    api(site, path, key) {
      return sendRaw(port, {
        path,
        headers: {
          host: `${site}.localhost:${port}`,
          accept: 'application/json',
          authorization: basic(key ?? (site === 'acme' ? acme.apiKey : globex.apiKey)),
        },
      });
    },
    subscribe(site, productHandle, email = 'ada@example.com') {
      return engine.site(site).subscriptions.create({
        productHandle,
        customer: { firstName: 'Ada', lastName: 'Lovelace', email },
        creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
      });
    },
  };
  const stop = async () => {
    await close(server);
    if (demoServer !== undefined) await close(demoServer);
    await engine.close();
  };
  return { fixture, stop };
}

/** Registers hooks that give every test its own hosted server; returns a getter for the current fixture. */
export function useHostedFixture(options: HostedFixtureOptions = {}): () => HostedFixture {
  let current: { fixture: HostedFixture; stop: () => Promise<void> } | undefined;
  beforeEach(async () => {
    current = await startHostedFixture(options);
  });
  afterEach(async () => {
    const running = current;
    current = undefined;
    await running?.stop();
  });
  return () => {
    if (!current) throw new Error('hosted fixture used outside a test');
    return current.fixture;
  };
}

/** The value of each `<input type="hidden">` of a page, by name (entities decoded as a browser would). */
export function hiddenFields(page: string): [string, string][] {
  const fields: [string, string][] = [];
  for (const match of page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    fields.push([decodeEntities(match[1] ?? ''), decodeEntities(match[2] ?? '')]);
  }
  return fields;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
