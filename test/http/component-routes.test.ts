import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';

type ComponentJson = Record<string, unknown> & { id: number };

async function createSeats(fixture: HttpFixture, familyId: number): Promise<ComponentJson> {
  const reply = await fixture.as('acme', {
    method: 'POST',
    path: `/product_families/${familyId}/quantity_based_components.json`,
    json: {
      quantity_based_component: {
        name: 'Seats',
        unit_name: 'seat',
        handle: 'seats',
        pricing_scheme: 'per_unit',
        unit_price: '5.00',
      },
    },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json<{ component: ComponentJson }>().component;
}

describe('HTTP components', () => {
  const http = useHttpFixture();

  it('creates a quantity-based component as the SDK sends it (201, string prices)', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const seats = await createSeats(http(), familyId);
    expect(seats).toMatchObject({
      name: 'Seats',
      handle: 'seats',
      kind: 'quantity_based_component',
      unit_name: 'seat',
      pricing_scheme: 'per_unit',
      unit_price: '5.00',
      prices: [{ component_id: seats.id, starting_quantity: 1, ending_quantity: null, unit_price: '5.00' }],
      product_family_id: familyId,
      archived: false,
      version: 1,
      created_at: '2026-01-15T07:00:00-05:00',
    });
  });

  it('creates on/off and metered components, with price brackets for tiered pricing', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const onOff = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/on_off_components.json`,
      json: { on_off_component: { name: 'Support', unit_price: 20 } },
    });
    expect(onOff.status).toBe(201);
    expect(onOff.json()).toMatchObject({ component: { kind: 'on_off_component', unit_price: '20.00' } });
    const metered = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/metered_components.json`,
      json: {
        metered_component: {
          name: 'Storage',
          unit_name: 'GB',
          pricing_scheme: 'tiered',
          prices: [
            { starting_quantity: 1, ending_quantity: 10, unit_price: '2.00' },
            { starting_quantity: '11', unit_price: '0.0125' },
          ],
        },
      },
    });
    expect(metered.status).toBe(201);
    expect(metered.json()).toMatchObject({
      component: {
        kind: 'metered_component',
        pricing_scheme: 'tiered',
        unit_price: null,
        prices: [
          { starting_quantity: 1, ending_quantity: 10, unit_price: '2.00' },
          { starting_quantity: 11, ending_quantity: null, unit_price: '0.0125' },
        ],
      },
    });
  });

  it('lists a family’s components, reads one, and a price change makes a new version', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const seats = await createSeats(http(), familyId);
    const list = await http().as('acme', { path: `/product_families/${familyId}/components.json` });
    expect(list.status).toBe(200);
    expect(list.json()).toEqual([{ component: seats }]);
    const read = await http().as('acme', { path: `/components/${seats.id}.json` });
    expect(read.json()).toEqual({ component: seats });
    const nested = await http().as('acme', { path: `/product_families/${familyId}/components/${seats.id}.json` });
    expect(nested.json()).toEqual({ component: seats });
    const renamed = await http().as('acme', {
      method: 'PUT',
      path: `/product_families/${familyId}/components/${seats.id}.json`,
      json: { component: { name: 'Users' } },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json()).toMatchObject({ component: { name: 'Users', version: 1, unit_price: '5.00' } });
    const repriced = await http().as('acme', {
      method: 'PUT',
      path: `/product_families/${familyId}/components/${seats.id}.json`,
      json: { component: { unit_price: '6.5' } },
    });
    expect(repriced.json()).toMatchObject({ component: { name: 'Users', version: 2, unit_price: '6.50' } });
  });

  it('archiving hides a component from the family list unless include_archived=true', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const seats = await createSeats(http(), familyId);
    const archived = await http().as('acme', {
      method: 'DELETE',
      path: `/product_families/${familyId}/components/${seats.id}.json`,
    });
    expect(archived.status).toBe(200);
    expect(archived.json()).toMatchObject({
      component: { id: seats.id, archived: true, archived_at: '2026-01-15T07:00:00-05:00' },
    });
    expect((await http().as('acme', { path: `/product_families/${familyId}/components.json` })).json()).toEqual([]);
    const all = await http().as('acme', {
      path: `/product_families/${familyId}/components.json?include_archived=true`,
    });
    expect(all.json<{ component: ComponentJson }[]>().map((c) => c.component.id)).toEqual([seats.id]);
  });

  it('422 for bad pricing or a missing wrapper; 404 for an unknown component, family, or a component of another family', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const seats = await createSeats(http(), familyId);
    const other = await http().engine.site('acme').catalog.createFamily({ name: 'Other' });
    const noPrice = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/quantity_based_components.json`,
      json: { quantity_based_component: { name: 'X', unit_name: 'x' } },
    });
    expect(noPrice.status).toBe(422);
    expect(noPrice.json()).toEqual({ errors: ['Prices: at least one price bracket is required.'] });
    const wrongWrapper = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/metered_components.json`,
      json: { quantity_based_component: { name: 'X', unit_name: 'x', unit_price: '1' } },
    });
    expect(wrongWrapper.status).toBe(422);
    expect(wrongWrapper.json()).toEqual({
      errors: [
        'Request body: must be a JSON object with a "metered_component" object, like {"metered_component":{...}}.',
      ],
    });
    const badPrices = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/quantity_based_components.json`,
      json: { quantity_based_component: { name: 'X', unit_name: 'x', prices: 'cheap' } },
    });
    expect(badPrices.status).toBe(422);
    expect(badPrices.json()).toEqual({ errors: ['Prices: must be a list of price brackets.'] });
    for (const [method, path] of [
      ['GET', '/components/999.json'],
      ['GET', `/product_families/${other.id}/components/${seats.id}.json`],
      ['PUT', `/product_families/${other.id}/components/${seats.id}.json`],
      ['DELETE', `/product_families/${other.id}/components/${seats.id}.json`],
      ['GET', '/product_families/999/components.json'],
      ['POST', '/product_families/999/on_off_components.json'],
    ] as const) {
      const reply = await http().as('acme', { method, path, json: { component: { name: 'Z' } } });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
    // The component was not touched through the other family's path.
    expect((await http().as('acme', { path: `/components/${seats.id}.json` })).json()).toEqual({ component: seats });
  });
});

describe('HTTP product families and product archive', () => {
  const http = useHttpFixture();

  it('GET /product_families/{id}/products.json lists the family’s products with their family', async () => {
    const { familyId, productId } = await seedCatalog(http().engine);
    const other = await http().engine.site('acme').catalog.createFamily({ name: 'Other' });
    await http()
      .engine.site('acme')
      .catalog.createProduct(other.id, { name: 'Elsewhere', handle: 'elsewhere', priceInCents: 1, interval: 1 });
    const reply = await http().as('acme', { path: `/product_families/${familyId}/products.json` });
    expect(reply.status).toBe(200);
    const products = reply.json<{ product: Record<string, unknown> }[]>();
    expect(products.map((p) => p.product.id)).toEqual([productId]);
    expect(products[0]?.product).toMatchObject({
      handle: 'pro',
      price_in_cents: 1000,
      product_family: { id: familyId, name: 'Acme Projects' },
    });
  });

  it('PUT /product_families/{id}.json changes only what is sent', async () => {
    const { familyId } = await seedCatalog(http().engine);
    http().clock.advance({ minutes: 5 });
    const reply = await http().as('acme', {
      method: 'PUT',
      path: `/product_families/${familyId}.json`,
      json: { product_family: { description: 'All plans' } },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      product_family: {
        id: familyId,
        name: 'Acme Projects',
        handle: 'acme-projects',
        description: 'All plans',
        updated_at: '2026-01-15T07:05:00-05:00',
      },
    });
    const blank = await http().as('acme', {
      method: 'PUT',
      path: `/product_families/${familyId}.json`,
      json: { product_family: { name: ' ' } },
    });
    expect(blank.status).toBe(422);
    expect(blank.json()).toEqual({ errors: ['Name: cannot be blank.'] });
    const missing = await http().as('acme', {
      method: 'PUT',
      path: '/product_families/999.json',
      json: { product_family: { name: 'X' } },
    });
    expect(missing.status).toBe(404);
  });

  it('DELETE /products/{id}.json archives: the product leaves the family list and signups refuse it', async () => {
    const { familyId, productId } = await seedCatalog(http().engine);
    const reply = await http().as('acme', { method: 'DELETE', path: `/products/${productId}.json` });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      product: { id: productId, archived_at: '2026-01-15T07:00:00-05:00', product_family: { id: familyId } },
    });
    expect((await http().as('acme', { path: `/product_families/${familyId}/products.json` })).json()).toEqual([]);
    const withArchived = await http().as('acme', {
      path: `/product_families/${familyId}/products.json?include_archived=1`,
    });
    expect(withArchived.json<unknown[]>()).toHaveLength(1);
    expect((await http().as('acme', { method: 'DELETE', path: '/products/999.json' })).status).toBe(404);
  });
});
