import { describe, expect, it } from 'vitest';
import { basic } from './support/client.js';
import { seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

const DENIED = 'HTTP Basic: Access denied.\n';

/** The service's plain-text 401, byte for byte (clients compare it). */
function expectDenied(reply: { status: number; headers: Record<string, unknown>; text: string }) {
  expect(reply.status).toBe(401);
  expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(reply.text).toBe(DENIED);
  expect(Buffer.byteLength(reply.text)).toBe(27);
}

describe('HTTP auth', () => {
  const http = useHttpFixture();

  it('answers a request without Authorization with the plain-text 401', async () => {
    expectDenied(await http().as('acme', { path: '/product_families.json', key: null }));
  });

  it('answers a wrong key with the plain-text 401', async () => {
    expectDenied(await http().as('acme', { path: '/product_families.json', key: 'wrong-key' }));
  });

  it("answers another site's key with the plain-text 401", async () => {
    expectDenied(await http().as('acme', { path: '/product_families.json', key: http().keys.globex }));
  });

  it('answers an unknown site with the plain-text 401', async () => {
    expectDenied(await http().as('acme', { path: '/product_families.json', host: `nosuch.localhost:${http().port}` }));
  });

  it('answers a non-Basic scheme and a Basic header without a user with the plain-text 401', async () => {
    expectDenied(
      await http().as('acme', {
        path: '/product_families.json',
        key: null,
        headers: { authorization: `Bearer ${http().keys.acme}` },
      }),
    );
    expectDenied(
      await http().as('acme', {
        path: '/product_families.json',
        key: null,
        headers: { authorization: basic('', 'X') },
      }),
    );
  });

  it('checks the key before routing: an unknown path without credentials is a 401, not a 404', async () => {
    expectDenied(await http().as('acme', { path: '/nothing-here.xml', key: null }));
  });

  it('accepts any password: X, x and anything else', async () => {
    for (const password of ['X', 'x', 'whatever', '']) {
      const reply = await http().as('acme', {
        path: '/product_families.json',
        key: null,
        headers: { authorization: basic(http().keys.acme, password) },
      });
      expect(reply.status, `password ${JSON.stringify(password)}`).toBe(200);
    }
  });

  it('takes the site from the first Host label, case-insensitively, with or without a port', async () => {
    for (const host of ['acme.localhost', `ACME.localhost:${http().port}`, 'acme.example.test:443']) {
      expect((await http().as('acme', { path: '/product_families.json', host })).status, host).toBe(200);
    }
  });

  it('accepts a second API key of the same site', async () => {
    const second = await http().engine.sites.createApiKey('acme', 'second');
    expect((await http().as('acme', { path: '/product_families.json', key: second.key })).status).toBe(200);
  });
});

describe('HTTP tenancy', () => {
  const http = useHttpFixture();

  async function acmeSubscription(): Promise<number> {
    await seedCatalog(http().engine);
    const reply = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    expect(reply.status).toBe(201);
    return reply.json<{ subscription: { id: number } }>().subscription.id;
  }

  it("site B's key on site A's host, reading A's subscription, is a 401", async () => {
    const id = await acmeSubscription();
    const reply = await http().as('acme', { path: `/subscriptions/${id}.json`, key: http().keys.globex });
    expect(reply.status).toBe(401);
    expect(reply.text).toBe(DENIED);
  });

  it("site B reading site A's subscription id with its own key gets a 404, never A's data", async () => {
    const id = await acmeSubscription();
    const reply = await http().as('globex', { path: `/subscriptions/${id}.json` });
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json()).toEqual({ errors: [`Subscription ${id} not found.`] });
    expect(reply.text).not.toContain('Lovelace');
  });

  it("site B cannot list A's transactions, read A's customer or A's product", async () => {
    const id = await acmeSubscription();
    const view = await http().engine.site('acme').subscriptions.get(id);
    expect((await http().as('globex', { path: `/subscriptions/${id}/transactions.json` })).status).toBe(404);
    expect((await http().as('globex', { path: `/customers/${view.customer.id}.json` })).status).toBe(404);
    expect((await http().as('globex', { path: `/products/${view.product.product.id}.json` })).status).toBe(404);
    expect((await http().as('globex', { path: '/products/handle/pro.json' })).status).toBe(404);
    expect((await http().as('globex', { path: '/product_families.json' })).json()).toEqual([]);
  });

  it("site B cannot create a product in A's family", async () => {
    const { familyId } = await seedCatalog(http().engine);
    const reply = await http().as('globex', {
      method: 'POST',
      path: `/product_families/${familyId}/products.json`,
      json: { product: { name: 'X', price_in_cents: 100, interval: 1 } },
    });
    expect(reply.status).toBe(404);
    await expect(http().engine.site('acme').catalog.getProduct('x')).rejects.toMatchObject({ code: 'not_found' });
    await expect(http().engine.site('globex').catalog.getProduct('x')).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('HTTP auth: telling a caller how to reach a site', () => {
  const http = useHttpFixture();
  const HINT = 'the site comes from the first label of the Host header, e.g. Host: acme.localhost';

  it('answers a right key on a Host without a site label with the same 401 body, a challenge and a hint', async () => {
    for (const host of [`localhost:${http().port}`, `127.0.0.1:${http().port}`, `[::1]:${http().port}`]) {
      const reply = await http().as('acme', { path: '/product_families.json', host });
      expectDenied(reply);
      expect(reply.headers['www-authenticate'], host).toBe('Basic realm="Application"');
      expect(reply.headers['x-billing-hint'], host).toBe(HINT);
    }
  });

  it('gives no hint when the Host names a site, even an unknown one or with a wrong key', async () => {
    for (const request of [
      { path: '/product_families.json', host: `nosuch.localhost:${http().port}` },
      { path: '/product_families.json', key: 'wrong-key' },
    ]) {
      const reply = await http().as('acme', request);
      expectDenied(reply);
      expect(reply.headers['www-authenticate']).toBe('Basic realm="Application"');
      expect(reply.headers['x-billing-hint']).toBeUndefined();
    }
  });

  it('answers GET / without credentials with how to call the API and a curl line', async () => {
    const reply = await http().raw({ path: '/', headers: { host: `127.0.0.1:${http().port}` } });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = reply.json<{ how_to_call: string[]; example: string }>();
    expect(body.how_to_call.join(' ')).toContain('first label of the Host header');
    expect(body.how_to_call.join(' ')).toContain('HTTP Basic user');
    expect(body.example).toBe(
      `curl -u "$API_KEY:x" -H 'Host: acme.localhost' http://127.0.0.1:${http().port}/product_families.json`,
    );
    // The curl line works as printed, with the site's key.
    const followed = await http().raw({
      path: '/product_families.json',
      headers: { host: 'acme.localhost', authorization: basic(http().keys.acme, 'x') },
    });
    expect(followed.status).toBe(200);
  });

  it('still checks the key on every other path', async () => {
    expectDenied(await http().as('acme', { path: '/product_families.json', key: null }));
    expect((await http().raw({ method: 'POST', path: '/', headers: { host: 'acme.localhost' } })).status).toBe(401);
  });
});
