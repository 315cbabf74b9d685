import { describe, expect, it } from 'vitest';
import { seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

describe('HTTP metafields', () => {
  const http = useHttpFixture();

  it('POST /customers/metafields.json takes one object as the SDK sends it and answers a bare array', async () => {
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/customers/metafields.json',
      json: { metafields: { name: 'tier_x', input_type: 'text' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual([
      {
        id: expect.any(Number),
        name: 'tier_x',
        input_type: 'text',
        enum: null,
        scope: { hosted: [], csv: '0', invoices: '0', statements: '0', portal: '0' },
      },
    ]);
  });

  it('POST /subscriptions/metafields.json takes a list with enum and scope (spec §2 names)', async () => {
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions/metafields.json',
      json: {
        metafields: [
          { name: 'color', input_type: 'dropdown', enum: ['red', 'blue'], scope: { hosted: ['all'], csv: '1' } },
          { name: 'notes', scope: { invoices: 1, statements: true } },
        ],
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject([
      {
        name: 'color',
        input_type: 'dropdown',
        enum: ['red', 'blue'],
        scope: { hosted: ['all'], csv: '1', invoices: '0' },
      },
      { name: 'notes', input_type: 'text', scope: { invoices: '1', statements: '1', csv: '0' } },
    ]);
    // Customer and subscription fields are separate sets.
    const customers = await http().as('acme', { path: '/customers/metafields.json' });
    expect(customers.json()).toMatchObject({ total_count: 0, metafields: [] });
  });

  it('GET lists with the service’s paging object; PUT renames and retypes; DELETE removes', async () => {
    await http().as('acme', {
      method: 'POST',
      path: '/customers/metafields.json',
      json: { metafields: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] },
    });
    const page = await http().as('acme', { path: '/customers/metafields.json?per_page=2&page=2' });
    expect(page.status).toBe(200);
    expect(page.json()).toMatchObject({
      total_count: 3,
      current_page: 2,
      total_pages: 2,
      per_page: 2,
      metafields: [{ name: 'c' }],
    });
    const renamed = await http().as('acme', {
      method: 'PUT',
      path: '/customers/metafields.json',
      json: { metafields: { current_name: 'a', name: 'alpha', input_type: 'radio', enum: ['x', 'y'] } },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json()).toMatchObject([{ name: 'alpha', input_type: 'radio', enum: ['x', 'y'] }]);
    const scoped = await http().as('acme', {
      method: 'PUT',
      path: '/customers/metafields.json',
      json: { metafields: { name: 'b', scope: { portal: '1' } } },
    });
    expect(scoped.json()).toMatchObject([{ name: 'b', scope: { portal: '1' } }]);
    const deleted = await http().as('acme', { method: 'DELETE', path: '/customers/metafields.json?name=c' });
    expect(deleted.status).toBe(200);
    expect(deleted.json()).toEqual({});
    const names = (await http().as('acme', { path: '/customers/metafields.json' }))
      .json<{ metafields: { name: string }[] }>()
      .metafields.map((m) => m.name);
    expect(names).toEqual(['alpha', 'b']);
  });

  it('422 for a bad input type, a dropdown without values or a duplicate name; 404 for an unknown field', async () => {
    const badType = await http().as('acme', {
      method: 'POST',
      path: '/customers/metafields.json',
      json: { metafields: [{ name: 'x', input_type: 'checkbox' }] },
    });
    expect(badType.status).toBe(422);
    expect(badType.json()).toEqual({ errors: ["Input type: must be 'text', 'dropdown' or 'radio'."] });
    const noValues = await http().as('acme', {
      method: 'POST',
      path: '/customers/metafields.json',
      json: { metafields: { name: 'x', input_type: 'dropdown' } },
    });
    expect(noValues.json()).toEqual({ errors: ['Enum: cannot be blank for dropdown and radio fields.'] });
    const badScope = await http().as('acme', {
      method: 'POST',
      path: '/customers/metafields.json',
      json: { metafields: [{ name: 'ok' }, { name: 'x', scope: { csv: 'yes' } }] },
    });
    expect(badScope.status).toBe(422);
    expect(badScope.json()).toEqual({ errors: ['Csv: must be true or false.'] });
    // Nothing of a refused list is created.
    expect((await http().as('acme', { path: '/customers/metafields.json' })).json()).toMatchObject({ total_count: 0 });
    const empty = await http().as('acme', {
      method: 'POST',
      path: '/customers/metafields.json',
      json: { metafields: [] },
    });
    expect(empty.status).toBe(422);
    await http().as('acme', {
      method: 'POST',
      path: '/customers/metafields.json',
      json: { metafields: { name: 'x' } },
    });
    const duplicate = await http().as('acme', {
      method: 'POST',
      path: '/customers/metafields.json',
      json: { metafields: { name: 'x' } },
    });
    expect(duplicate.json()).toEqual({ errors: ['Name: must be unique - that value has been taken.'] });
    const unknownPut = await http().as('acme', {
      method: 'PUT',
      path: '/customers/metafields.json',
      json: { metafields: { current_name: 'nope', name: 'y' } },
    });
    expect(unknownPut.status).toBe(404);
    expect(unknownPut.json()).toEqual({ errors: ["Metafield: 'nope' does not exist."] });
    const unknownDelete = await http().as('acme', { method: 'DELETE', path: '/customers/metafields.json?name=nope' });
    expect(unknownDelete.status).toBe(404);
    const noName = await http().as('acme', { method: 'DELETE', path: '/customers/metafields.json' });
    expect(noName.status).toBe(422);
    expect(noName.json()).toEqual({ errors: ['Name: cannot be blank.'] });
  });
});

describe('HTTP metadata', () => {
  const http = useHttpFixture();

  async function customerWithFields() {
    const customer = await http()
      .engine.site('acme')
      .customers.create({ firstName: 'A', lastName: 'B', email: 'a@b.co' });
    await http().as('acme', {
      method: 'POST',
      path: '/customers/metafields.json',
      json: { metafields: [{ name: 'tier_x' }, { name: 'size', input_type: 'radio', enum: ['s', 'm'] }] },
    });
    return customer.id;
  }

  it('POST /customers/{id}/metadata.json sets values as the SDK sends them and answers the ones set', async () => {
    const id = await customerWithFields();
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/customers/${id}/metadata.json`,
      json: { metadata: [{ name: 'tier_x', value: 'gold' }] },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual([
      {
        id: expect.any(Number),
        name: 'tier_x',
        value: 'gold',
        resource_id: id,
        metafield_id: expect.any(Number),
        deleted_at: null,
      },
    ]);
    const single = await http().as('acme', {
      method: 'PUT',
      path: `/customers/${id}/metadata.json`,
      json: { metadata: { name: 'size', value: 'm' } },
    });
    expect(single.status).toBe(200);
    expect(single.json()).toMatchObject([{ name: 'size', value: 'm' }]);
    const numeric = await http().as('acme', {
      method: 'PUT',
      path: `/customers/${id}/metadata.json`,
      json: { metadata: { name: 'tier_x', value: 3 } },
    });
    expect(numeric.json()).toMatchObject([{ name: 'tier_x', value: '3' }]);
    const list = await http().as('acme', { path: `/customers/${id}/metadata.json` });
    expect(list.status).toBe(200);
    expect(list.json()).toMatchObject({
      total_count: 2,
      current_page: 1,
      total_pages: 1,
      per_page: 20,
      metadata: [
        { name: 'size', value: 'm' },
        { name: 'tier_x', value: '3' },
      ],
    });
  });

  it('DELETE removes by name or names[]; a name without a value deletes nothing and is a 404', async () => {
    const id = await customerWithFields();
    await http().as('acme', {
      method: 'POST',
      path: `/customers/${id}/metadata.json`,
      json: {
        metadata: [
          { name: 'tier_x', value: 'gold' },
          { name: 'size', value: 's' },
        ],
      },
    });
    const wrong = await http().as('acme', {
      method: 'DELETE',
      path: `/customers/${id}/metadata.json?names[]=tier_x&names[]=missing`,
    });
    expect(wrong.status).toBe(404);
    expect(wrong.json()).toEqual({ errors: ["Metadata: 'missing' is not set."] });
    expect((await http().as('acme', { path: `/customers/${id}/metadata.json` })).json()).toMatchObject({
      total_count: 2,
    });
    const one = await http().as('acme', { method: 'DELETE', path: `/customers/${id}/metadata.json?name=tier_x` });
    expect(one.status).toBe(200);
    expect(one.json()).toEqual({});
    const rest = await http().as('acme', { path: `/customers/${id}/metadata.json` });
    expect(rest.json()).toMatchObject({ total_count: 1, metadata: [{ name: 'size' }] });
  });

  it('422 for an unknown field or a value outside a radio field; 404 for an unknown customer', async () => {
    const id = await customerWithFields();
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/customers/${id}/metadata.json`,
      json: {
        metadata: [
          { name: 'nope', value: 'x' },
          { name: 'size', value: 'xl' },
        ],
      },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({
      errors: ["Metafield: 'nope' does not exist.", "Value: 'xl' is not one of the allowed values for 'size'."],
    });
    const objectValue = await http().as('acme', {
      method: 'POST',
      path: `/customers/${id}/metadata.json`,
      json: { metadata: { name: 'tier_x', value: { a: 1 } } },
    });
    expect(objectValue.json()).toEqual({ errors: ['Value: must be a string.'] });
    for (const method of ['GET', 'POST', 'PUT', 'DELETE']) {
      const missing = await http().as('acme', {
        method,
        path: '/customers/999/metadata.json?name=tier_x',
        json: { metadata: { name: 'tier_x', value: 'x' } },
      });
      expect(missing.status, method).toBe(404);
      expect(missing.json(), method).toEqual({ errors: ['Customer 999 not found.'] });
    }
  });

  it('subscription metadata works the same, and signup metafields set values at signup', async () => {
    await seedCatalog(http().engine);
    await http().as('acme', {
      method: 'POST',
      path: '/subscriptions/metafields.json',
      json: { metafields: { name: 'color' } },
    });
    const s = await subscribeOverHttp(http(), { metafields: { color: 'blue' } });
    const list = await http().as('acme', { path: `/subscriptions/${s.id}/metadata.json` });
    expect(list.json()).toMatchObject({
      total_count: 1,
      metadata: [{ name: 'color', value: 'blue', resource_id: s.id }],
    });
    const body = signupBody() as { subscription: Record<string, unknown> };
    const unknown = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: { subscription: { ...body.subscription, customer_id: s.customerId, metafields: { shape: 'round' } } },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.json()).toEqual({ errors: ["Metafield: 'shape' does not exist."] });
  });
});
