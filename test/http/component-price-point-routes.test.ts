import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

interface PricePointsBody {
  readonly price_points: { readonly handle: string; readonly component_id: number }[];
}

/** Component price point routes over raw HTTP: bodies, error shapes, path forms, component reads and allocations. */
describe('component price point routes', () => {
  const fixture = useHttpFixture();

  it('answers errors in the service’s shapes and changes nothing on a refusal', async () => {
    const f = fixture();
    const { familyId } = await seedCatalog(f.engine);
    const seats = await f.engine.site('acme').components.create(familyId, {
      name: 'Seats',
      kind: 'quantity_based',
      unitName: 'seat',
      handle: 'seats',
      unitPrice: '5',
    });
    const id = seats.component.id;
    const post = (path: string, json: unknown) => f.as('acme', { method: 'POST', path, json });
    const handles = async () =>
      (
        (await f.as('acme', { path: `/components/${id}/price_points.json?archived=true` })).json() as PricePointsBody
      ).price_points.map((p) => p.handle);

    const read = await f.as('acme', { path: `/components/${id}.json` });
    expect(read.json()).toMatchObject({
      component: {
        default_price_point_name: 'Original',
        price_point_count: 1,
        default_price_point_id: expect.any(Number),
      },
    });

    const unwrapped = await post(`/components/${id}/price_points.json`, { name: 'x' });
    expect(unwrapped.status).toBe(422);
    expect(unwrapped.json()).toMatchObject({ errors: { price_point: [expect.any(String)] } });
    // What the engine cannot honour is refused by name rather than ignored.
    const unsupported = await post(`/components/${id}/price_points.json`, {
      price_point: { name: 'Taxed', unit_price: '1', tax_included: true, interval: 1, interval_unit: 'month' },
    });
    expect(unsupported.status).toBe(422);
    expect(Object.keys((unsupported.json() as { errors: object }).errors).sort()).toEqual([
      'interval',
      'interval_unit',
      'tax_included',
    ]);
    const badScheme = await post(`/components/${id}/price_points.json`, {
      price_point: { name: 'Odd', pricing_scheme: 'flat', prices: [{ starting_quantity: 1, unit_price: '1' }] },
    });
    expect(badScheme.status).toBe(422);
    expect(badScheme.json()).toEqual({
      errors: { pricing_scheme: ["Pricing scheme: 'flat' is not one of per_unit, volume, tiered, stairstep."] },
    });
    const bulk = await post(`/components/handle:seats/price_points/bulk.json`, {
      price_points: [
        { name: 'A', unit_price: '1' },
        { name: '', unit_price: '2' },
      ],
    });
    expect(bulk.status).toBe(422);
    expect(bulk.json()).toEqual({ errors: ['Name: cannot be blank.'] });
    expect(await handles()).toEqual(['original']);

    const created = await post(`/components/${id}/price_points.json`, {
      price_point: {
        name: 'Tiers',
        handle: 'tiers',
        pricing_scheme: 'tiered',
        prices: [
          { starting_quantity: 1, ending_quantity: 5, unit_price: '2' },
          { starting_quantity: 6, unit_price: '1.25' },
        ],
      },
    });
    expect(created.status).toBe(201);
    expect(created.json()).toMatchObject({
      price_point: {
        handle: 'tiers',
        type: 'catalog',
        default: false,
        component_id: id,
        pricing_scheme: 'tiered',
        prices: [
          { starting_quantity: 1, ending_quantity: 5, unit_price: '2.00' },
          { starting_quantity: 6, ending_quantity: null, unit_price: '1.25' },
        ],
      },
    });
    // `_destroy` drops a bracket from the list that replaces them.
    const updated = await f.as('acme', {
      method: 'PUT',
      path: `/components/${id}/price_points/handle:tiers.json`,
      json: {
        price_point: {
          pricing_scheme: 'per_unit',
          prices: [
            { starting_quantity: 1, unit_price: '3' },
            { starting_quantity: 6, unit_price: '1', _destroy: true },
          ],
        },
      },
    });
    expect(updated.json()).toMatchObject({
      price_point: { pricing_scheme: 'per_unit', prices: [{ starting_quantity: 1, unit_price: '3.00' }] },
    });

    expect((await f.as('acme', { path: `/components/${id}/price_points/handle:nope.json` })).status).toBe(404);
    expect((await f.as('acme', { path: `/components/999999/price_points.json` })).status).toBe(404);
    const refused = await f.as('acme', {
      method: 'DELETE',
      path: `/components/${id}/price_points/handle:original.json`,
    });
    expect(refused.status).toBe(422);
    expect(refused.json()).toEqual({ errors: ['Price point: the default price point cannot be archived.'] });
    const dates = await f.as('acme', { path: '/components_price_points.json?filter[start_date]=2026-01-01' });
    expect(dates.status).toBe(422);
    const all = await f.as('acme', { path: '/components_price_points.json?filter[type]=catalog' });
    expect((all.json() as PricePointsBody).price_points.map((p) => [p.component_id, p.handle])).toEqual([
      [id, 'tiers'],
    ]);
    expect((await f.as('acme', { path: `/components/${id}.json` })).json()).toMatchObject({
      component: { price_point_count: 2 },
    });
  });

  it('allocates at a price point by handle and moves subscriptions, answering refusals in the endpoint’s shape', async () => {
    const f = fixture();
    const { familyId } = await seedCatalog(f.engine);
    const acme = f.engine.site('acme');
    const seats = await acme.components.create(familyId, {
      name: 'Seats',
      kind: 'quantity_based',
      unitName: 'seat',
      handle: 'seats',
      unitPrice: '5',
    });
    const id = seats.component.id;
    await acme.pricePoints.createComponentPricePoint(id, { name: 'Premium', handle: 'premium', unitPrice: '8' });
    const subscription = await subscribeOverHttp(f);

    const allocated = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${subscription.id}/components/${id}/allocations.json`,
      json: { allocation: { quantity: 2, price_point_id: 'handle:premium', accrue_charge: true } },
    });
    expect(allocated.status).toBe(201);
    const first = (allocated.json() as { allocation: Record<string, unknown> }).allocation;
    expect(first).toMatchObject({ quantity: 2, price_point_handle: 'premium', price_point_name: 'Premium' });
    // The subscription had no Seats before: there is no price point it moved from.
    expect(first).not.toHaveProperty('previous_price_point_id');
    const component = await f.as('acme', { path: `/subscriptions/${subscription.id}/components/${id}.json` });
    expect(component.json()).toMatchObject({
      component: { allocated_quantity: 2, price_point_handle: 'premium', price_point_type: 'catalog' },
    });

    const premium = await acme.pricePoints.getComponentPricePoint(id, 'premium');
    const back = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${subscription.id}/components/${id}/allocations.json`,
      json: { allocation: { quantity: 2, price_point_id: 'original', accrue_charge: true } },
    });
    expect(back.json()).toMatchObject({
      allocation: { price_point_handle: 'original', previous_price_point_id: premium.pricePoint.id },
    });

    const unknown = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${subscription.id}/allocations.json`,
      json: { allocations: [{ component_id: id, quantity: 3, price_point_id: 'handle:nope' }] },
    });
    expect(unknown.status).toBe(404);

    const empty = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${subscription.id}/price_points.json`,
      json: { components: [] },
    });
    expect(empty.status).toBe(422);
    const blank = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${subscription.id}/price_points.json`,
      json: { components: [{ component_id: id }] },
    });
    expect(blank.json()).toEqual({ errors: [{ component_id: id, message: 'Price point: cannot be blank.' }] });
    const moved = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${subscription.id}/price_points.json`,
      json: { components: [{ component_id: String(id), price_point: 'premium' }] },
    });
    expect(moved.status).toBe(200);
    const listed = await f.as('acme', { path: `/subscriptions/${subscription.id}/components.json` });
    expect(listed.json()).toMatchObject([
      { component: { price_point_handle: 'premium', price_point_type: 'catalog' } },
    ]);
    expect(moved.json()).toEqual({ components: [{ component_id: id, price_point: premium.pricePoint.id }] });
    const elsewhere = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/999999/price_points/reset.json',
    });
    expect(elsewhere.status).toBe(404);
  });
});
