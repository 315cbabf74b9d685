import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp, transactionsOverHttp } from './support/subscribe.js';

interface RouteCase {
  readonly method: string;
  readonly path: string;
  readonly json?: unknown;
}

/** Everything of acme's the new routes can name: catalog, coupon, component, fields, values, note, referral. */
async function acmeWorld(fixture: HttpFixture) {
  const { familyId, productId } = await seedCatalog(fixture.engine);
  await fixture.engine.sites.update('acme', { settings: { referralsEnabled: true } });
  const acme = fixture.engine.site('acme');
  const coupon = await acme.coupons.create({
    name: 'Ten',
    code: 'ACME10',
    percentage: '10',
    productFamilyId: familyId,
  });
  const component = await acme.components.create(familyId, {
    kind: 'quantity_based_component',
    name: 'Seats',
    unitName: 'seat',
    unitPrice: '5',
  });
  await acme.metafields.createFields('customer', { name: 'tier' });
  await acme.metafields.createFields('subscription', { name: 'color' });
  const s = await subscribeOverHttp(fixture);
  await acme.metafields.setMetadata('customer', s.customerId, [{ name: 'tier', value: 'gold' }]);
  await acme.metafields.setMetadata('subscription', s.id, [{ name: 'color', value: 'red' }]);
  const note = await acme.notes.create(s.id, { body: 'private' });
  return {
    familyId,
    productId,
    couponId: coupon.id,
    componentId: component.component.id,
    subscriptionId: s.id,
    customerId: s.customerId,
    paymentId: s.signupPaymentId,
    noteId: note.id,
    referral: String(s.body.referral_code),
  };
}

/** Every new route, each naming acme's records by id, code or name. */
function routesNaming(w: Awaited<ReturnType<typeof acmeWorld>>): RouteCase[] {
  const sub = `/subscriptions/${w.subscriptionId}`;
  const fam = `/product_families/${w.familyId}`;
  return [
    { method: 'POST', path: `${fam}/coupons.json`, json: { coupon: { name: 'X', code: 'X', percentage: 1 } } },
    { method: 'GET', path: `/coupons/${w.couponId}.json` },
    { method: 'PUT', path: `/coupons/${w.couponId}.json`, json: { coupon: { name: 'Stolen' } } },
    { method: 'DELETE', path: `/coupons/${w.couponId}.json` },
    { method: 'GET', path: '/coupons/find.json?code=ACME10' },
    { method: 'GET', path: '/coupons/validate.json?code=ACME10' },
    { method: 'GET', path: `${fam}/coupons/validate.json?code=ACME10` },
    ...['quantity_based_components', 'on_off_components', 'metered_components'].map((kind) => ({
      method: 'POST',
      path: `${fam}/${kind}.json`,
      json: { [kind.slice(0, -1)]: { name: 'X', unit_name: 'x', unit_price: '1' } },
    })),
    { method: 'GET', path: `${fam}/components.json` },
    { method: 'GET', path: `/components/${w.componentId}.json` },
    { method: 'GET', path: `${fam}/components/${w.componentId}.json` },
    { method: 'PUT', path: `${fam}/components/${w.componentId}.json`, json: { component: { name: 'Stolen' } } },
    { method: 'DELETE', path: `${fam}/components/${w.componentId}.json` },
    { method: 'GET', path: `${fam}/products.json` },
    { method: 'PUT', path: `${fam}.json`, json: { product_family: { name: 'Stolen' } } },
    { method: 'DELETE', path: `/products/${w.productId}.json` },
    { method: 'PUT', path: '/customers/metafields.json', json: { metafields: { current_name: 'tier', name: 'x' } } },
    { method: 'DELETE', path: '/customers/metafields.json?name=tier' },
    { method: 'PUT', path: '/subscriptions/metafields.json', json: { metafields: { current_name: 'color' } } },
    { method: 'DELETE', path: '/subscriptions/metafields.json?name=color' },
    ...['POST', 'PUT'].flatMap((method) => [
      { method, path: `/customers/${w.customerId}/metadata.json`, json: { metadata: { name: 'tier', value: 'x' } } },
      { method, path: `${sub}/metadata.json`, json: { metadata: { name: 'color', value: 'x' } } },
    ]),
    { method: 'GET', path: `/customers/${w.customerId}/metadata.json` },
    { method: 'GET', path: `${sub}/metadata.json` },
    { method: 'DELETE', path: `/customers/${w.customerId}/metadata.json?name=tier` },
    { method: 'DELETE', path: `${sub}/metadata.json?name=color` },
    { method: 'POST', path: `${sub}/charges.json`, json: { charge: { amount: '1.00', memo: 'm' } } },
    { method: 'POST', path: `${sub}/adjustments.json`, json: { adjustment: { amount: '1.00', memo: 'm' } } },
    { method: 'POST', path: `${sub}/credits.json`, json: { credit: { amount: '1.00', memo: 'm' } } },
    { method: 'POST', path: `${sub}/payments.json`, json: { payment: { amount: '1.00', memo: 'm' } } },
    {
      method: 'POST',
      path: `${sub}/refunds.json`,
      json: { refund: { payment_id: w.paymentId, amount: '1.00', memo: 'm' } },
    },
    { method: 'GET', path: `${sub}/transactions.json` },
    { method: 'POST', path: `${sub}/notes.json`, json: { note: { body: 'x' } } },
    { method: 'GET', path: `${sub}/notes.json` },
    { method: 'GET', path: `${sub}/notes/${w.noteId}.json` },
    { method: 'PUT', path: `${sub}/notes/${w.noteId}.json`, json: { note: { body: 'stolen' } } },
    { method: 'DELETE', path: `${sub}/notes/${w.noteId}.json` },
    { method: 'GET', path: `/referral_codes/validate.json?code=${w.referral}` },
    { method: 'POST', path: `${sub}/migrations.json`, json: { migration: { product_handle: 'pro' } } },
    { method: 'POST', path: `${sub}/migrations/preview.json`, json: { migration: { product_handle: 'pro' } } },
    { method: 'PUT', path: `${sub}.json`, json: { subscription: { product_handle: 'pro' } } },
  ];
}

/** Routes that name nothing by id: another site simply sees its own (empty) data through them. */
const SITE_WIDE: RouteCase[] = [
  { method: 'GET', path: '/coupons.json' },
  { method: 'POST', path: '/coupons.json', json: { coupon: { name: 'X', code: 'X', percentage: 1 } } },
  { method: 'GET', path: '/transactions.json' },
  { method: 'GET', path: '/customers/metafields.json' },
  { method: 'POST', path: '/customers/metafields.json', json: { metafields: { name: 'x' } } },
  { method: 'GET', path: '/subscriptions/metafields.json' },
  { method: 'POST', path: '/subscriptions/metafields.json', json: { metafields: { name: 'x' } } },
];

describe('HTTP tenancy of the new routes', () => {
  const http = useHttpFixture();

  it("another site's key is a 401 on every new route, before anything is read", async () => {
    const world = await acmeWorld(http());
    for (const route of [...routesNaming(world), ...SITE_WIDE]) {
      const reply = await http().as('globex', { ...route, key: http().keys.acme });
      expect(reply.status, `${route.method} ${route.path}`).toBe(401);
      expect(reply.text, `${route.method} ${route.path}`).toBe('HTTP Basic: Access denied.\n');
    }
  });

  it("a site's own key on another site's ids, codes and names is a 404, and nothing of the other site changes", async () => {
    const world = await acmeWorld(http());
    const acme = http().engine.site('acme');
    const lines = await transactionsOverHttp(http(), world.subscriptionId);
    for (const route of routesNaming(world)) {
      const reply = await http().as('globex', route);
      expect(reply.status, `${route.method} ${route.path}: ${reply.text}`).toBe(404);
      expect(reply.headers['content-type'], route.path).toBe('application/json; charset=utf-8');
    }
    expect(await acme.coupons.get(world.couponId)).toMatchObject({ name: 'Ten', archivedAt: null });
    expect((await acme.components.get(world.componentId)).component).toMatchObject({ name: 'Seats', archivedAt: null });
    expect(await acme.catalog.getFamily(world.familyId)).toMatchObject({ name: 'Acme Projects' });
    expect((await acme.catalog.getProduct(world.productId)).product.archivedAt).toBeNull();
    expect((await acme.metafields.listFields('customer')).map((f) => f.name)).toEqual(['tier']);
    expect((await acme.metafields.listMetadata('subscription', world.subscriptionId)).map((v) => v.value)).toEqual([
      'red',
    ]);
    expect((await acme.notes.get(world.subscriptionId, world.noteId)).body).toBe('private');
    expect(await transactionsOverHttp(http(), world.subscriptionId)).toEqual(lines);
  });

  it('site-wide lists show only the own site; a body naming another site’s family is a 422', async () => {
    const world = await acmeWorld(http());
    expect((await http().as('globex', { path: '/coupons.json' })).json()).toEqual([]);
    expect((await http().as('globex', { path: '/transactions.json' })).json()).toEqual([]);
    expect((await http().as('globex', { path: '/customers/metafields.json' })).json()).toMatchObject({
      total_count: 0,
      metafields: [],
    });
    const coupon = await http().as('globex', {
      method: 'POST',
      path: '/coupons.json',
      json: { coupon: { name: 'X', code: 'X', percentage: 1, product_family_id: world.familyId } },
    });
    expect(coupon.status).toBe(422);
    expect(coupon.json()).toEqual({ errors: [`Product family: '${world.familyId}' does not exist for this site.`] });
  });
});
