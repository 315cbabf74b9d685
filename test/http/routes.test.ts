import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

const JSON_TYPE = 'application/json; charset=utf-8';

describe('HTTP routes: success shapes', () => {
  const http = useHttpFixture();

  it('POST /product_families.json creates a family (201, wrapped)', async () => {
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/product_families.json',
      json: { product_family: { name: 'Acme Projects', description: 'All plans' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.headers['content-type']).toBe(JSON_TYPE);
    const body = reply.json<{ product_family: Record<string, unknown> }>();
    expect(body.product_family).toMatchObject({
      name: 'Acme Projects',
      handle: 'acme-projects',
      description: 'All plans',
    });
    expect(body.product_family.id).toEqual(expect.any(Number));
  });

  it('GET /product_families.json lists families as a bare array of wrappers', async () => {
    await seedCatalog(http().engine);
    await http().engine.site('acme').catalog.createFamily({ name: 'Second' });
    const reply = await http().as('acme', { path: '/product_families.json' });
    expect(reply.status).toBe(200);
    const body = reply.json<{ product_family: { handle: string } }[]>();
    expect(Array.isArray(body)).toBe(true);
    expect(body.map((item) => item.product_family.handle)).toEqual(['acme-projects', 'second']);
  });

  it('GET /product_families/{id}.json reads one family', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const reply = await http().as('acme', { path: `/product_families/${familyId}.json` });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({ product_family: { id: familyId, handle: 'acme-projects' } });
  });

  it('POST /product_families/{id}/products.json creates a product with its family (201)', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/products.json`,
      json: {
        product: {
          name: 'Basic',
          handle: 'basic',
          description: 'd',
          price_in_cents: 1000,
          interval: 1,
          interval_unit: 'month',
        },
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({
      product: {
        handle: 'basic',
        name: 'Basic',
        price_in_cents: 1000,
        interval: 1,
        interval_unit: 'month',
        version_number: 1,
        product_version: 1,
        product_family: { id: familyId, handle: 'acme-projects', name: 'Acme Projects' },
      },
    });
  });

  it('GET /products/{id}.json and /products/handle/{handle}.json read the current version', async () => {
    const { productId } = await seedCatalog(http().engine);
    const byId = await http().as('acme', { path: `/products/${productId}.json` });
    const byHandle = await http().as('acme', { path: '/products/handle/pro.json' });
    expect(byId.status).toBe(200);
    expect(byHandle.status).toBe(200);
    expect(byId.json()).toMatchObject({ product: { id: productId, handle: 'pro', price_in_cents: 1000 } });
    expect(byHandle.json()).toEqual(byId.json());
  });

  it('PUT /products/{id}.json makes a new version (200) and later reads show it', async () => {
    const { productId } = await seedCatalog(http().engine);
    const reply = await http().as('acme', {
      method: 'PUT',
      path: `/products/${productId}.json`,
      json: { product: { price_in_cents: '2500' } },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      product: { id: productId, price_in_cents: 2500, version_number: 2, name: 'Pro' },
    });
    const read = await http().as('acme', { path: `/products/${productId}.json` });
    expect(read.json()).toMatchObject({ product: { version_number: 2, price_in_cents: 2500 } });
  });

  it('POST /customers.json creates a customer (201) and GET /customers/{id}.json reads it', async () => {
    const created = await http().as('acme', {
      method: 'POST',
      path: '/customers.json',
      json: {
        customer: {
          first_name: 'Grace',
          last_name: 'Hopper',
          email: 'grace@example.com',
          reference: 'g-1',
          organization: 'Navy',
          zip: 10001,
        },
      },
    });
    expect(created.status).toBe(201);
    const customer = created.json<{ customer: { id: number } }>().customer;
    expect(customer).toMatchObject({
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.com',
      reference: 'g-1',
      organization: 'Navy',
      zip: '10001',
    });
    const read = await http().as('acme', { path: `/customers/${customer.id}.json` });
    expect(read.status).toBe(200);
    expect(read.json()).toEqual(created.json());
  });

  it('POST /subscriptions.json signs up (201) with customer, product, card and signup payment', async () => {
    const { productId } = await seedCatalog(http().engine);
    const reply = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    expect(reply.status).toBe(201);
    const body = reply.json<{ subscription: Record<string, unknown> }>();
    expect(body.subscription).toMatchObject({
      state: 'active',
      balance_in_cents: 0,
      signup_revenue: '10.00',
      product_price_in_cents: 1000,
      product_version_number: 1,
      customer: { first_name: 'Ada', email: 'ada@example.com', reference: 'ada-1' },
      product: { id: productId, handle: 'pro', product_family: { handle: 'acme-projects' } },
      credit_card: {
        payment_type: 'credit_card',
        masked_card_number: 'XXXX-XXXX-XXXX-1111',
        card_type: 'visa',
        expiration_month: 12,
        expiration_year: 2030,
      },
    });
    const transactions = await http()
      .engine.site('acme')
      .subscriptions.transactions(body.subscription.id as number);
    const payment = transactions.find((line) => line.type === 'payment');
    expect(body.subscription.signup_payment_id).toBe(payment?.id);
  });

  it('POST /subscriptions.json accepts an existing customer_id and a product_id', async () => {
    const { productId } = await seedCatalog(http().engine);
    const customer = await http()
      .engine.site('acme')
      .customers.create({ firstName: 'G', lastName: 'H', email: 'g@example.com' });
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          product_id: String(productId),
          customer_id: customer.id,
          credit_card_attributes: { full_number: '5555555555554444', expiration_month: 11, expiration_year: 2028 },
        },
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({
      subscription: {
        customer: { id: customer.id },
        product: { id: productId },
        credit_card: { card_type: 'master', masked_card_number: 'XXXX-XXXX-XXXX-4444' },
      },
    });
  });

  it('GET /subscriptions/{id}.json reads what the signup returned', async () => {
    await seedCatalog(http().engine);
    const created = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    const id = created.json<{ subscription: { id: number } }>().subscription.id;
    const read = await http().as('acme', { path: `/subscriptions/${id}.json` });
    expect(read.status).toBe(200);
    expect(read.json()).toEqual(created.json());
  });

  it('GET /subscriptions/{id}/transactions.json lists ledger lines as a bare array, newest first', async () => {
    await seedCatalog(http().engine);
    const created = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    const id = created.json<{ subscription: { id: number } }>().subscription.id;
    const reply = await http().as('acme', { path: `/subscriptions/${id}/transactions.json` });
    expect(reply.status).toBe(200);
    const lines = reply.json<{ transaction: Record<string, unknown> }[]>();
    expect(lines.map((l) => [l.transaction.transaction_type, l.transaction.type])).toEqual([
      ['payment', 'Payment'],
      ['charge', 'Charge'],
    ]);
    expect(lines[1]?.transaction).toMatchObject({
      kind: 'baseline',
      amount_in_cents: 1000,
      starting_balance_in_cents: 0,
      ending_balance_in_cents: 1000,
      subscription_id: id,
    });
    expect(lines[0]?.transaction).toMatchObject({
      success: true,
      amount_in_cents: 1000,
      ending_balance_in_cents: 0,
      refunded_amount_in_cents: 0,
    });
  });

  it('the transaction list honours direction, kinds[], page and per_page', async () => {
    await seedCatalog(http().engine);
    const created = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    const id = created.json<{ subscription: { id: number } }>().subscription.id;
    const types = async (query: string) =>
      (await http().as('acme', { path: `/subscriptions/${id}/transactions.json?${query}` }))
        .json<{ transaction: { transaction_type: string } }[]>()
        .map((l) => l.transaction.transaction_type);
    expect(await types('direction=asc')).toEqual(['charge', 'payment']);
    expect(await types('kinds[]=charge')).toEqual(['charge']);
    expect(await types('per_page=1&page=2&direction=asc')).toEqual(['payment']);
    expect(await types('per_page=1&page=3')).toEqual([]);
  });

  it('POST /sites/clear_data.json clears customers and subscriptions of a test site (200, JSON body)', async () => {
    await seedCatalog(http().engine);
    const created = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    const id = created.json<{ subscription: { id: number } }>().subscription.id;
    const reply = await http().as('acme', { method: 'POST', path: '/sites/clear_data.json' });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe(JSON_TYPE);
    expect(reply.json()).toEqual({});
    expect((await http().as('acme', { path: `/subscriptions/${id}.json` })).status).toBe(404);
    // The catalog stays.
    expect((await http().as('acme', { path: '/products/handle/pro.json' })).status).toBe(200);
  });

  it('POST /sites/clear_data.json is refused on a live site (403)', async () => {
    await http().engine.sites.update('acme', { mode: 'live' });
    const reply = await http().as('acme', { method: 'POST', path: '/sites/clear_data.json' });
    expect(reply.status).toBe(403);
    expect(reply.json()).toEqual({ errors: ['Site data can only be cleared on a site in test mode.'] });
  });
});

async function cancelledSubscription(fixture: HttpFixture): Promise<number> {
  await seedCatalog(fixture.engine);
  const created = await fixture.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
  const id = created.json<{ subscription: { id: number } }>().subscription.id;
  expect((await fixture.as('acme', { method: 'DELETE', path: `/subscriptions/${id}.json` })).status).toBe(200);
  return id;
}

describe('HTTP routes: state spelling by compat', () => {
  const spec = useHttpFixture();

  it('writes the spec spelling `cancelled` by default', async () => {
    const id = await cancelledSubscription(spec());
    const reply = await spec().as('acme', { path: `/subscriptions/${id}.json` });
    expect(reply.json()).toMatchObject({
      subscription: { state: 'cancelled', canceled_at: '2026-01-15T07:00:00-05:00' },
    });
  });
});

describe('HTTP routes: chargify compat', () => {
  const chargify = useHttpFixture({ compat: 'chargify' });

  it('writes the hosted service spelling `canceled`', async () => {
    const id = await cancelledSubscription(chargify());
    const reply = await chargify().as('acme', { path: `/subscriptions/${id}.json` });
    expect(reply.json()).toMatchObject({ subscription: { state: 'canceled', previous_state: 'canceled' } });
  });
});
