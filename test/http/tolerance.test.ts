import { describe, expect, it } from 'vitest';
import { basic } from './support/client.js';
import { seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

const JSON_TYPE = 'application/json; charset=utf-8';

// What real clients send (reference real-clients §3 and the checklist of §6).
describe('HTTP tolerance of real clients', () => {
  const http = useHttpFixture();

  async function subscribe(): Promise<number> {
    await seedCatalog(http().engine);
    const reply = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    expect(reply.status).toBe(201);
    return reply.json<{ subscription: { id: number } }>().subscription.id;
  }

  it('ignores empty query pairs (the SDK leaves one & per unset parameter)', async () => {
    const id = await subscribe();
    const reply = await http().as('acme', {
      path: `/subscriptions/${id}/transactions.json?&per_page=200&direction=asc&&&&&&&&&&&&`,
    });
    expect(reply.status).toBe(200);
    expect(
      reply.json<{ transaction: { transaction_type: string } }[]>().map((l) => l.transaction.transaction_type),
    ).toEqual(['charge', 'payment']);
  });

  it('reads the JSON body of a DELETE (the SDK cancels with one)', async () => {
    const id = await subscribe();
    const reply = await http().as('acme', {
      method: 'DELETE',
      path: `/subscriptions/${id}.json`,
      json: { subscription: { cancellation_message: 'Too expensive', reason_code: 'price' } },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe(JSON_TYPE);
    expect(reply.json()).toMatchObject({
      subscription: { state: 'cancelled', cancellation_message: 'Too expensive', cancellation_method: 'merchant_api' },
    });
  });

  it('accepts the SDK subscription list query with its trailing empty pairs', async () => {
    const id = await subscribe();
    const reply = await http().as('acme', { path: '/subscriptions.json?page=1&per_page=200&state=active&&&&&&&&&&&&' });
    expect(reply.status).toBe(200);
    expect(reply.json<{ subscription: { id: number } }[]>().map((s) => s.subscription.id)).toEqual([id]);
    const withoutPage = await http().as('acme', { path: '/subscriptions.json?&per_page=200&state=active&&&&' });
    expect(withoutPage.json<unknown[]>()).toHaveLength(1);
  });

  it('accepts an empty POST typed application/x-www-form-urlencoded (clear_data, SDK defaults)', async () => {
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/sites/clear_data.json?cleanup_scope=customers',
      body: '',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': '0',
        accept: 'application/json, text/plain, */*',
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe(JSON_TYPE);
    expect(reply.text).not.toBe('');
  });

  it('answers an unknown cleanup_scope with a 422, not a 500', async () => {
    const reply = await http().as('acme', { method: 'POST', path: '/sites/clear_data.json?cleanup_scope=everything' });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({ errors: ["Cleanup scope: must be 'all' or 'customers'."] });
  });

  it('takes card expiry as numbers or strings', async () => {
    await seedCatalog(http().engine);
    for (const [month, year] of [
      [12, 2030],
      ['12', '2030'],
      [' 7', 2031],
    ] as const) {
      const body = signupBody('pro', { expiration_month: month, expiration_year: year }) as {
        subscription: { customer_attributes: object };
      };
      body.subscription.customer_attributes = { first_name: 'A', last_name: 'B', email: 'a@b.co' };
      const reply = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: body });
      expect(reply.status, `${month}/${year}`).toBe(201);
      expect(reply.json(), `${month}/${year}`).toMatchObject({
        subscription: { credit_card: { expiration_month: Number(month), expiration_year: Number(year) } },
      });
    }
  });

  it('takes ids, price_in_cents and intervals as numbers or strings and booleans as "true"/"false"', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const product = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/products.json`,
      json: {
        product: {
          name: 'Lite',
          price_in_cents: '500',
          interval: '1',
          interval_unit: 'month',
          request_credit_card: 'false',
          taxable: 'true',
        },
      },
    });
    expect(product.status).toBe(201);
    expect(product.json()).toMatchObject({
      product: { price_in_cents: 500, interval: 1, request_credit_card: false, taxable: true },
    });
    const customer = await http()
      .engine.site('acme')
      .customers.create({ firstName: 'A', lastName: 'B', email: 'a@b.co' });
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          product_handle: 'lite',
          customer_id: String(customer.id),
          credit_card_attributes: { full_number: 4111111111111111, expiration_month: 1, expiration_year: 2030 },
        },
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({
      subscription: { customer: { id: customer.id }, product: { handle: 'lite' } },
    });
  });

  it('ignores unknown fields and nulls for optional ones', async () => {
    await seedCatalog(http().engine);
    const body = signupBody() as { subscription: Record<string, unknown> };
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        uniqueness_token: 'abc',
        subscription: {
          ...body.subscription,
          coupon_code: null,
          next_billing_at: null,
          ref: null,
          custom_fields: { color: 'blue' },
          customer_attributes: { first_name: 'A', last_name: 'B', email: 'a@b.co', vat_number: 'X1', cc_emails: null },
        },
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({
      subscription: { state: 'active', coupon_code: null, customer: { email: 'a@b.co' } },
    });
  });

  it('accepts the old client: lowercase x password, empty Cookie, Content-Length 0 on GET, no User-Agent', async () => {
    const reply = await http().raw({
      path: '/product_families.json',
      headers: {
        host: `acme.localhost:${http().port}`,
        authorization: basic(http().keys.acme, 'x'),
        accept: 'application/json',
        cookie: '',
        'content-length': '0',
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe(JSON_TYPE);
    expect(reply.json()).toEqual([]);
  });

  it('refuses a JSON body typed as a form (curl -d without -H) with 415, and reads one with a BOM', async () => {
    // A browser can send a form or text/plain cross-site with the Basic credentials it holds, so a
    // write's body must be typed as JSON (see security-edge.test.ts); the SDK and the old client do.
    const plain = await http().as('acme', {
      method: 'POST',
      path: '/product_families.json',
      body: JSON.stringify({ product_family: { name: 'One' } }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(plain.status).toBe(415);
    expect(await http().engine.site('acme').catalog.listFamilies()).toEqual([]);
    const bom = await http().as('acme', {
      method: 'POST',
      path: '/product_families.json',
      body: `\uFEFF${JSON.stringify({ product_family: { name: 'Two' } })}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(bom.status).toBe(201);
    expect(bom.json()).toMatchObject({ product_family: { handle: 'two' } });
  });

  it('sends a Content-Type and a non-empty body on every response it gives', async () => {
    const id = await subscribe();
    const requests = [
      { path: '/product_families.json' },
      { path: `/subscriptions/${id}.json` },
      { path: `/subscriptions/${id}/transactions.json?kinds[]=refund` },
      { path: '/subscriptions/999.json' },
      { path: '/x.xml' },
      { path: '/product_families.json', key: 'bad' },
      { method: 'POST', path: '/customers.json', body: 'nope' },
    ];
    for (const request of requests) {
      const reply = await http().as('acme', request);
      expect(reply.headers['content-type'], request.path).toMatch(/^(application\/json|text\/plain); charset=utf-8$/);
      expect(reply.text.length, request.path).toBeGreaterThan(0);
    }
  });
});
