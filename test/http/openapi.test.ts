import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { openApiPath, servedOperations } from '../../examples/http/openapi/openapi-document.js';
import { REFERENCE_SCRIPT_PATH, registerOpenApiRoutes } from '../../examples/http/openapi/openapi-routes.js';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';
import { appRoutes, plainPattern } from './support/route-table.js';
import { subscribeOverHttp } from './support/subscribe.js';

type JsonSchema = Record<string, unknown>;
interface Operation {
  operationId?: string;
  summary?: string;
  security?: unknown[];
  parameters?: { name: string; in: string }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
}
interface Document {
  openapi: string;
  servers: { url: string }[];
  security: Record<string, unknown[]>[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, Record<string, unknown>> };
}

/** `/openapi.json` as a client gets it: no API key, the site's Host. */
async function fetchDocument(fixture: HttpFixture): Promise<Document> {
  const reply = await fixture.raw({ path: '/openapi.json', headers: { host: 'acme.localhost' } });
  expect(reply.status, reply.text).toBe(200);
  expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  return reply.json<Document>();
}

function operation(document: Document, method: string, path: string): Operation {
  const found = document.paths[path]?.[method];
  if (found === undefined) throw new Error(`no ${method.toUpperCase()} ${path} in the document`);
  return found;
}

/** `METHOD path` of every operation in the document. */
function documentedKeys(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/**
 * A validator of one schema of the document: JSON Schema 2020-12 (OpenAPI 3.1's dialect) with the
 * document's components beside it, so that its `#/components/schemas/...` references resolve.
 */
function schemaValidator(document: Document, schema: JsonSchema) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile({ ...schema, components: document.components });
}

function expectValid(document: Document, schema: JsonSchema | undefined, value: unknown): void {
  if (schema === undefined) throw new Error('no schema documented');
  const validate = schemaValidator(document, schema);
  const valid = validate(value);
  expect(validate.errors ?? [], JSON.stringify(value).slice(0, 400)).toEqual([]);
  expect(valid).toBe(true);
}

function jsonResponseSchema(document: Document, method: string, path: string, status: string) {
  return operation(document, method, path).responses[status]?.content?.['application/json']?.schema;
}

describe('GET /openapi.json', () => {
  const http = useHttpFixture();

  it('is a valid OpenAPI 3.1 document, served without an API key', async () => {
    const document = await fetchDocument(http());
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document as unknown as Record<string, unknown>);
    expect(result.errors ?? [], JSON.stringify(result.errors ?? []).slice(0, 2000)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every route of the app, method and path, and nothing else', async () => {
    const document = await fetchDocument(http());
    // The test spells paths its own way (route-table's plain pattern, then `:name` as `{name}`), so
    // a mistake in the document's path conversion shows up here. `ALL .../*` entries are app.use
    // middlewares (authentication, limits), not routes.
    const served = appRoutes(http().app)
      .filter((route) => !(route.method === 'ALL' && route.pattern.endsWith('*')))
      .map((route) => `${route.method} ${plainPattern(route.pattern).replaceAll(/:(\w+)/g, '{$1}')}`);
    expect(served.length).toBeGreaterThan(80);
    expect(new Set(served).size).toBe(served.length);
    expect([...documentedKeys(document)].sort()).toEqual([...served].sort());
    expect(served).toEqual(expect.arrayContaining(['GET /openapi.json', 'GET /docs', 'POST /subscriptions.json']));
  });

  it('names every operation uniquely and gives each its path parameters', async () => {
    const document = await fetchDocument(http());
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(ids.every((id) => typeof id === 'string' && id !== '')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [path, item] of Object.entries(document.paths)) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      for (const op of Object.values(item)) {
        expect((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name)).toEqual(inPath);
      }
    }
    const subscription = operation(document, 'get', '/subscriptions/{id}.json');
    expect(subscription.summary).toBe('Read a subscription');
  });

  it('says how to authenticate: HTTP Basic with the API key, none on the public routes', async () => {
    const document = await fetchDocument(http());
    expect(document.servers).toEqual([{ url: '/', description: 'This server' }]);
    expect(document.security).toEqual([{ apiKey: [] }]);
    expect(document.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'basic' });
    for (const [method, path] of [
      ['get', '/'],
      ['get', '/openapi.json'],
      ['get', '/docs'],
      ['post', '/api/v2/signups'],
      ['get', '/update_payment/{id}/{token}'],
      ['get', '/portal/{customerId}/{expires}/{signature}'],
    ] as const) {
      expect(operation(document, method, path).security, `${method} ${path}`).toEqual([]);
    }
    expect(operation(document, 'post', '/subscriptions.json').security).toBeUndefined();
    expect(operation(document, 'get', '/portal/customers/{id}/management_link.json').security).toBeUndefined();
    expect(operation(document, 'get', '/customers.json').responses['401']?.content?.['text/plain']).toBeDefined();
    expect(operation(document, 'get', '/openapi.json').responses['401']).toBeUndefined();
  });

  it('marks as public exactly the parameterless GET routes that answer without a key', async () => {
    const document = await fetchDocument(http());
    const gets = Object.entries(document.paths).filter(([path, item]) => item.get !== undefined && !path.includes('{'));
    expect(gets.length).toBeGreaterThan(10);
    for (const [path, item] of gets) {
      const reply = await http().raw({ path, headers: { host: 'acme.localhost' } });
      const documentedPublic = item.get?.security?.length === 0;
      expect(reply.status === 401, `GET ${path} answered ${reply.status}`).toBe(!documentedPublic);
    }
  });

  it('reads request bodies with the wire layer schemas', async () => {
    const document = await fetchDocument(http());
    const signup = operation(document, 'post', '/subscriptions.json').requestBody;
    expect(signup?.required).toBe(true);
    const schema = signup?.content['application/json']?.schema as {
      required: string[];
      properties: { subscription: { properties: Record<string, unknown> } };
    };
    expect(schema.required).toEqual(['subscription']);
    expect(Object.keys(schema.properties.subscription.properties)).toEqual(
      expect.arrayContaining(['product_handle', 'product_id', 'customer_attributes', 'credit_card_attributes']),
    );
    // The scalar readers take what clients send: a number for a text field, a string for an id.
    const customer = operation(document, 'post', '/customers.json').requestBody?.content['application/json']?.schema;
    expectValid(document, customer, {
      customer: { first_name: 'Ada', last_name: 'L', email: 'a@example.com', zip: 10001 },
    });
    expectValid(document, signup?.content['application/json']?.schema, signupBody());
    const validate = schemaValidator(document, customer ?? {});
    expect(validate({ customer: { first_name: { nested: true } } })).toBe(false);
    // A cancellation may come without a body.
    expect(operation(document, 'delete', '/subscriptions/{id}.json').requestBody?.required).toBe(false);
  });

  it('describes real responses: a subscription, a customer, a product, transactions, an error', async () => {
    const fixture = http();
    const document = await fetchDocument(fixture);
    const { productId } = await seedCatalog(fixture.engine);
    const subscribed = await subscribeOverHttp(fixture);
    expectValid(document, jsonResponseSchema(document, 'post', '/subscriptions.json', '201'), {
      subscription: subscribed.body,
    });

    const checks: [string, string, string][] = [
      [`/subscriptions/${subscribed.id}.json`, '/subscriptions/{id}.json', '200'],
      [`/customers/${subscribed.customerId}.json`, '/customers/{id}.json', '200'],
      [`/products/${productId}.json`, '/products/{id}.json', '200'],
      [`/subscriptions/${subscribed.id}/transactions.json`, '/subscriptions/{id}/transactions.json', '200'],
      ['/subscriptions.json', '/subscriptions.json', '200'],
      ['/subscriptions/999999.json', '/subscriptions/{id}.json', '404'],
    ];
    for (const [url, path, status] of checks) {
      const reply = await fixture.as('acme', { path: url });
      expect(String(reply.status), `${url}: ${reply.text}`).toBe(status);
      expectValid(document, jsonResponseSchema(document, 'get', path, status), reply.json());
    }
    const transactions = await fixture.as('acme', { path: `/subscriptions/${subscribed.id}/transactions.json` });
    expect(transactions.json<unknown[]>().length).toBeGreaterThan(0);
  });

  it('describes real writes: the body sent fits the documented request, the 201 the documented response', async () => {
    const fixture = http();
    const document = await fetchDocument(fixture);
    const { familyId } = await seedCatalog(fixture.engine);
    const writes: [string, string, unknown][] = [
      ['/product_families.json', '/product_families.json', { product_family: { name: 'Second family' } }],
      [
        '/customers.json',
        '/customers.json',
        { customer: { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', zip: 10001 } },
      ],
      [
        `/product_families/${familyId}/coupons.json`,
        '/product_families/{id}/coupons.json',
        { coupon: { name: 'Ten off', code: 'SAVE10', description: 'ten percent', percentage: '10' } },
      ],
      [
        `/product_families/${familyId}/on_off_components.json`,
        '/product_families/{id}/on_off_components.json',
        { on_off_component: { name: 'Support', unit_price: 20 } },
      ],
    ];
    for (const [url, path, json] of writes) {
      const documented = operation(document, 'post', path);
      expectValid(document, documented.requestBody?.content['application/json']?.schema, json);
      const reply = await fixture.as('acme', { method: 'POST', path: url, json });
      expect(reply.status, `${url}: ${reply.text}`).toBe(201);
      expectValid(document, jsonResponseSchema(document, 'post', path, '201'), reply.json());
    }
    const refused = await fixture.as('acme', { method: 'POST', path: '/customers.json', json: { customer: {} } });
    expect(refused.status).toBe(422);
    expectValid(document, jsonResponseSchema(document, 'post', '/customers.json', '422'), refused.json());
  });

  it('a documented schema refuses a body that differs from the serializer', async () => {
    const fixture = http();
    const document = await fetchDocument(fixture);
    await seedCatalog(fixture.engine);
    const subscribed = await subscribeOverHttp(fixture);
    const schema = jsonResponseSchema(document, 'get', '/subscriptions/{id}.json', '200') ?? {};
    const validate = schemaValidator(document, schema);
    expect(validate({ subscription: { ...subscribed.body, balance_in_cents: '10.00' } })).toBe(false);
    expect(validate({ subscription: { ...subscribed.body, surprise: 1 } })).toBe(false);
  });
});

describe('a route the document has no metadata for', () => {
  it('still gets an operation: path parameters, a generic body and the standard errors', async () => {
    const app = new Hono();
    registerOpenApiRoutes(app, { referenceScriptFile: false });
    // Registered after the document's route: the document is made on its first request.
    app.post('/widgets/:id{[^/]+\\.json}', (c) => c.json({}));
    app.get('/gadgets/:code{[A-Z]{3}}/parts', (c) => c.json([]));
    const reply = await app.request('/openapi.json');
    const document = (await reply.json()) as Document;

    const widget = operation(document, 'post', '/widgets/{id}.json');
    expect(widget.summary).toBe('POST /widgets/{id}.json');
    expect(widget.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(widget.requestBody?.content['application/json']?.schema).toEqual({ type: 'object' });
    expect(Object.keys(widget.responses).sort()).toEqual([
      '2XX',
      '400',
      '401',
      '404',
      '413',
      '415',
      '422',
      '429',
      '500',
    ]);
    expect(operation(document, 'get', '/gadgets/{code}/parts').parameters).toEqual([
      { name: 'code', in: 'path', required: true, schema: { type: 'string', pattern: '^(?:[A-Z]{3})$' } },
    ]);
    expect((await new Validator().validate(document as unknown as Record<string, unknown>)).valid).toBe(true);
  });

  it('is made once per app, on its first request', async () => {
    const app = new Hono();
    registerOpenApiRoutes(app, { referenceScriptFile: false });
    const first = await (await app.request('/openapi.json')).text();
    // Hono adds no route once it has answered; an entry put in its table by hand shows whether
    // the second request made the document again.
    app.routes.push({ method: 'GET', path: '/late', basePath: '/', handler: (c) => c.text('late') });
    const second = await (await app.request('/openapi.json')).text();
    expect(first).toContain('"/openapi.json"');
    expect(second).toBe(first);
    expect(first).not.toContain('/late');
  });
});

describe('GET /docs', () => {
  it('serves the Scalar page with its script from this server when the bundle is installed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'billing-docs-'));
    try {
      const bundle = join(dir, 'standalone.js');
      await writeFile(bundle, 'window.bundleLoaded = true;');
      const app = new Hono();
      registerOpenApiRoutes(app, { referenceScriptFile: bundle });
      const page = await app.request('/docs');
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain(`<script src="${REFERENCE_SCRIPT_PATH}"></script>`);
      expect(html).toContain('"url": "/openapi.json"');
      // No script, font or telemetry from another origin.
      expect(html).not.toMatch(/https?:\/\//);
      const script = await app.request(REFERENCE_SCRIPT_PATH);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(await script.text()).toBe('window.bundleLoaded = true;');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('without the bundle, lists the operations on a plain page and answers 404 for the script', async () => {
    const app = new Hono();
    registerOpenApiRoutes(app, { referenceScriptFile: false });
    app.post('/customers.json', (c) => c.json({}));
    const html = await (await app.request('/docs')).text();
    expect(html).toContain('<code>POST /customers.json</code> Create a customer');
    expect(html).toContain('@scalar/api-reference');
    expect(html).not.toContain('<script');
    expect((await app.request(REFERENCE_SCRIPT_PATH)).status).toBe(404);
  });
});

describe('openApiPath and servedOperations', () => {
  it('spell Hono patterns as OpenAPI paths', () => {
    expect(openApiPath('/product_families/:fid/components/:id{[^/]+\\.json}')).toEqual({
      path: '/product_families/{fid}/components/{id}.json',
      parameters: [{ name: 'fid' }, { name: 'id' }],
    });
    expect(openApiPath('/portal/:customerId{[0-9]+}/:expires{[0-9]+}/:signature').path).toBe(
      '/portal/{customerId}/{expires}/{signature}',
    );
  });

  it('leave out middlewares, list an ALL route under every method, and keep one of each route', () => {
    const operations = servedOperations([
      { method: 'ALL', path: '/*' },
      { method: 'ALL', path: '/portal/*' },
      { method: 'GET', path: '/a.json' },
      { method: 'GET', path: '/a.json' },
      { method: 'ALL', path: '/echo' },
    ]);
    expect(operations.map((op) => `${op.method} ${op.path}`)).toEqual([
      'get /a.json',
      'get /echo',
      'post /echo',
      'put /echo',
      'patch /echo',
      'delete /echo',
    ]);
  });
});
