import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

type Sub = { subscription: Record<string, unknown> & { id: number; customer: { id: number } } };
type EventBody = { event: Record<string, unknown> & { id: number; key: string } };

async function subscribe(f: HttpFixture, reference = 'ada-1', email = 'ada@example.com') {
  const body = signupBody() as { subscription: { customer_attributes: Record<string, unknown> } };
  body.subscription.customer_attributes = { ...body.subscription.customer_attributes, reference, email };
  const reply = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: body });
  expect(reply.status).toBe(201);
  return reply.json<Sub>().subscription;
}

describe('HTTP API breadth (chargify compat)', () => {
  const http = useHttpFixture({ compat: 'chargify' });

  describe('events', () => {
    it('GET /events.json lists events newest first in the service shape, and polls with since_id', async () => {
      const f = http();
      await seedCatalog(f.engine);
      const sub = await subscribe(f);
      await f.as('acme', { method: 'DELETE', path: `/subscriptions/${sub.id}.json` });
      const reply = await f.as('acme', { path: '/events.json' });
      expect(reply.status).toBe(200);
      const events = reply.json<EventBody[]>();
      expect(events[0]).toEqual({
        event: {
          id: expect.any(Number),
          key: 'subscription_state_change',
          message: 'Subscription state change on subscription ' + sub.id + ': active to canceled',
          subscription_id: sub.id,
          customer_id: sub.customer.id,
          // 07:00 in New York: the site's zone.
          created_at: '2026-01-15T07:00:00-05:00',
          event_specific_data: { previous_subscription_state: 'active', new_subscription_state: 'canceled' },
        },
      });
      const last = events[0]!.event.id;
      const polled = await f.as('acme', { path: `/events.json?since_id=${last}&direction=asc` });
      expect(polled.json<EventBody[]>().map((e) => e.event.id)).toEqual([last]);
      const later = await f.as('acme', { path: `/events.json?since_id=${last + 1}&direction=asc` });
      expect(later.json()).toEqual([]);
    });

    it('filters keys as the SDK sends them (filter=a,b) and as a bracket list, counts, and pages', async () => {
      const f = http();
      await seedCatalog(f.engine);
      await subscribe(f, 'a', 'a@example.com');
      await subscribe(f, 'b', 'b@example.com');
      const keys = async (query: string) =>
        (await f.as('acme', { path: `/events.json?${query}` })).json<EventBody[]>().map((e) => e.event.key);
      expect(await keys('filter=signup_success,customer_create')).toEqual([
        'signup_success',
        'customer_create',
        'signup_success',
        'customer_create',
      ]);
      expect(await keys('filter[]=customer_create')).toEqual(['customer_create', 'customer_create']);
      expect(await keys('filter=customer_create&per_page=1&page=2')).toEqual(['customer_create']);
      const count = await f.as('acme', { path: '/events/count.json?filter=signup_success' });
      expect(count.status).toBe(200);
      expect(count.json()).toEqual({ count: 2 });
      // Another site sees none of them.
      expect((await f.as('globex', { path: '/events/count.json' })).json()).toEqual({ count: 0 });
    });

    it("GET /subscriptions/{id}/events.json lists one subscription's events; bad input is a 422, an unknown id a 404", async () => {
      const f = http();
      await seedCatalog(f.engine);
      const a = await subscribe(f, 'a', 'a@example.com');
      await subscribe(f, 'b', 'b@example.com');
      const reply = await f.as('acme', { path: `/subscriptions/${a.id}/events.json` });
      expect(reply.status).toBe(200);
      const events = reply.json<EventBody[]>();
      expect(events.length).toBeGreaterThan(0);
      expect(events.every((e) => e.event.subscription_id === a.id)).toBe(true);
      const bad = await f.as('acme', { path: '/events.json?direction=up&start_date=2026-02-30' });
      expect(bad.status).toBe(422);
      expect(bad.json()).toEqual({
        errors: ['Direction: must be asc or desc.', 'Start date: is not a valid date.'],
      });
      expect((await f.as('acme', { path: '/subscriptions/999/events.json' })).status).toBe(404);
      expect((await f.as('globex', { path: `/subscriptions/${a.id}/events.json` })).status).toBe(404);
    });
  });

  describe('customers', () => {
    it('GET /customers/lookup.json finds by reference (find-or-create works); an unknown reference is a 404', async () => {
      const f = http();
      const created = await f.as('acme', {
        method: 'POST',
        path: '/customers.json',
        json: { customer: { first_name: 'A', last_name: 'L', email: 'a@x.io', reference: 'cust 1' } },
      });
      const id = created.json<{ customer: { id: number } }>().customer.id;
      const found = await f.as('acme', { path: '/customers/lookup.json?reference=cust%201' });
      expect(found.status).toBe(200);
      expect(found.json()).toMatchObject({ customer: { id, reference: 'cust 1' } });
      const missing = await f.as('acme', { path: '/customers/lookup.json?reference=nobody' });
      expect(missing.status).toBe(404);
      const blank = await f.as('acme', { path: '/customers/lookup.json' });
      expect(blank.status).toBe(422);
      expect((await f.as('globex', { path: '/customers/lookup.json?reference=cust%201' })).status).toBe(404);
    });

    it("GET /customers/{id}/subscriptions.json lists the customer's subscriptions; an unknown customer is a 404", async () => {
      const f = http();
      await seedCatalog(f.engine);
      const a = await subscribe(f, 'a', 'a@example.com');
      await subscribe(f, 'b', 'b@example.com');
      const reply = await f.as('acme', { path: `/customers/${a.customer.id}/subscriptions.json` });
      expect(reply.status).toBe(200);
      expect(reply.json<Sub[]>().map((s) => s.subscription.id)).toEqual([a.id]);
      expect((await f.as('acme', { path: '/customers/999/subscriptions.json' })).status).toBe(404);
    });

    it('GET /customers.json searches with q, orders by direction and filters dates', async () => {
      const f = http();
      const make = async (first: string, email: string) =>
        (
          await f.as('acme', {
            method: 'POST',
            path: '/customers.json',
            json: { customer: { first_name: first, last_name: 'X', email } },
          })
        ).json<{ customer: { id: number } }>().customer.id;
      const ada = await make('Ada', 'ada@example.com');
      f.clock.advance({ days: 2 });
      const bob = await make('Bob', 'bob@example.com');
      const ids = async (query: string) =>
        (await f.as('acme', { path: `/customers.json?${query}` }))
          .json<{ customer: { id: number } }[]>()
          .map((c) => c.customer.id);
      expect(await ids('q=ADA')).toEqual([ada]);
      expect(await ids('q=example.com&direction=desc')).toEqual([bob, ada]);
      expect(await ids('date_field=created_at&start_date=2026-01-16')).toEqual([bob]);
      expect(await ids('end_date=2026-01-15')).toEqual([ada]);
      const bad = await f.as('acme', { path: '/customers.json?date_field=deleted_at' });
      expect(bad.status).toBe(422);
    });
  });

  describe('subscription status actions', () => {
    it('PUT /subscriptions/{id}/retry.json charges a past-due balance now; with nothing to retry it is a 422', async () => {
      const f = http();
      await seedCatalog(f.engine);
      const sub = await subscribe(f);
      const nothing = await f.as('acme', { method: 'PUT', path: `/subscriptions/${sub.id}/retry.json` });
      expect(nothing.status).toBe(422);
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
      f.clock.set('2026-02-15T13:00:00Z');
      await f.engine.runDue();
      const reply = await f.as('acme', { method: 'PUT', path: `/subscriptions/${sub.id}/retry.json` });
      expect(reply.status).toBe(200);
      expect(reply.json()).toMatchObject({ subscription: { id: sub.id, state: 'active', balance_in_cents: 0 } });
    });

    it('PUT /subscriptions/{id}/hold.json moves the resume date; PUT /activate.json refuses an active subscription', async () => {
      const f = http();
      await seedCatalog(f.engine);
      const sub = await subscribe(f);
      const held = await f.as('acme', { method: 'POST', path: `/subscriptions/${sub.id}/hold.json` });
      expect(held.status).toBe(200);
      const moved = await f.as('acme', {
        method: 'PUT',
        path: `/subscriptions/${sub.id}/hold.json`,
        json: { hold: { automatically_resume_at: '2026-02-01T12:00:00Z' } },
      });
      expect(moved.status).toBe(200);
      expect(moved.json()).toMatchObject({ subscription: { state: 'on_hold' } });
      f.clock.set('2026-02-01T12:00:01Z');
      await f.engine.runDue();
      expect((await f.as('acme', { path: `/subscriptions/${sub.id}.json` })).json()).toMatchObject({
        subscription: { state: 'active' },
      });
      const activate = await f.as('acme', { method: 'PUT', path: `/subscriptions/${sub.id}/activate.json` });
      expect(activate.status).toBe(422);
    });
  });

  describe('catalog and site', () => {
    it('GET /products.json and /components.json list every family, paged; components are found by handle', async () => {
      const f = http();
      const { familyId } = await seedCatalog(f.engine);
      const other = await f.engine.site('acme').catalog.createFamily({ name: 'Other' });
      await f.engine.site('acme').catalog.createProduct(other.id, {
        name: 'Basic',
        handle: 'basic',
        priceInCents: 500,
        interval: 1,
        intervalUnit: 'month',
      });
      const products = (await f.as('acme', { path: '/products.json' })).json<{ product: { handle: string } }[]>();
      expect(products.map((p) => p.product.handle)).toEqual(['pro', 'basic']);
      const second = await f.as('acme', { path: '/products.json?per_page=1&page=2' });
      expect(second.json<{ product: { handle: string } }[]>().map((p) => p.product.handle)).toEqual(['basic']);
      const created = await f.as('acme', {
        method: 'POST',
        path: `/product_families/${familyId}/quantity_based_components.json`,
        json: {
          quantity_based_component: {
            name: 'Seats',
            unit_name: 'seat',
            pricing_scheme: 'per_unit',
            unit_price: '5',
            handle: 'seats',
          },
        },
      });
      expect(created.status).toBe(201);
      const componentId = created.json<{ component: { id: number } }>().component.id;
      const list = await f.as('acme', { path: '/components.json' });
      expect(list.json<{ component: { id: number } }[]>().map((c) => c.component.id)).toEqual([componentId]);
      const lookup = await f.as('acme', { path: '/components/lookup.json?handle=seats' });
      expect(lookup.json()).toMatchObject({ component: { id: componentId, handle: 'seats' } });
      const byHandle = await f.as('acme', { path: '/components/handle:seats.json' });
      expect(byHandle.json()).toMatchObject({ component: { id: componentId } });
      const renamed = await f.as('acme', {
        method: 'PUT',
        path: `/components/${componentId}.json`,
        json: { component: { name: 'Users' } },
      });
      expect(renamed.status).toBe(200);
      expect(renamed.json()).toMatchObject({ component: { id: componentId, name: 'Users' } });
      expect((await f.as('acme', { path: '/components/lookup.json?handle=nope' })).status).toBe(404);
      // A filter the route does not apply is refused rather than ignored.
      const filtered = await f.as('acme', { path: '/products.json?filter[ids]=1' });
      expect(filtered.status).toBe(422);
      expect(filtered.json()).toEqual({ errors: ['filter: filtering this list is not supported by this server yet.'] });
    });

    it("serves a family's coupons under the family's path, and not under another family's", async () => {
      const f = http();
      const { familyId } = await seedCatalog(f.engine);
      const other = await f.engine.site('acme').catalog.createFamily({ name: 'Other' });
      const created = await f.as('acme', {
        method: 'POST',
        path: `/product_families/${familyId}/coupons.json`,
        json: { coupon: { name: 'Ten off', code: 'TEN', percentage: '10', description: 'Ten percent' } },
      });
      expect(created.status).toBe(201);
      const couponId = created.json<{ coupon: { id: number } }>().coupon.id;
      const listed = await f.as('acme', { path: `/product_families/${familyId}/coupons.json` });
      expect(listed.json<{ coupon: { id: number } }[]>().map((c) => c.coupon.id)).toEqual([couponId]);
      expect((await f.as('acme', { path: `/product_families/${other.id}/coupons.json` })).json()).toEqual([]);
      const read = await f.as('acme', { path: `/product_families/${familyId}/coupons/${couponId}.json` });
      expect(read.json()).toMatchObject({ coupon: { id: couponId, code: 'TEN' } });
      expect((await f.as('acme', { path: `/product_families/${other.id}/coupons/${couponId}.json` })).status).toBe(404);
      const archived = await f.as('acme', {
        method: 'DELETE',
        path: `/product_families/${familyId}/coupons/${couponId}.json`,
      });
      expect(archived.status).toBe(200);
      expect(archived.json<{ coupon: { archived_at: string | null } }>().coupon.archived_at).not.toBeNull();
    });

    it('GET /site.json describes the site without its secrets', async () => {
      const f = http();
      const reply = await f.as('acme', { path: '/site.json' });
      expect(reply.status).toBe(200);
      expect(reply.json()).toEqual({
        site: {
          id: f.sites.acme.site.id,
          name: expect.any(String),
          subdomain: 'acme',
          currency: 'USD',
          non_primary_currencies: [],
          relationship_invoicing_enabled: false,
          customer_hierarchy_enabled: false,
          whopays_enabled: false,
          default_payment_collection_method: 'automatic',
          test: true,
        },
      });
      expect(reply.text).not.toContain(f.sites.acme.site.sharedKey);
    });
  });

  describe('consistency', () => {
    it('answers a known path with a wrong method with 405 and Allow, an unknown path with 404', async () => {
      const f = http();
      const wrong = await f.as('acme', { method: 'DELETE', path: '/events.json' });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.allow).toBe('GET');
      expect(wrong.json()).toEqual({ errors: ['Method DELETE is not allowed on /events.json; it takes GET.'] });
      const patch = await f.as('acme', { method: 'PATCH', path: '/customers/1.json', json: {} });
      expect(patch.status).toBe(405);
      expect(patch.headers.allow?.split(', ').sort()).toEqual(['DELETE', 'GET', 'PUT']);
      expect((await f.as('acme', { path: '/no_such_thing.json' })).status).toBe(404);
    });

    it('answers a path that fits `{id}.json` by its own route, not "Subscription not found"', async () => {
      const f = http();
      // An empty signup preview is the signup's own refusal (no product), not a missing subscription "preview".
      const preview = await f.as('acme', { method: 'POST', path: '/subscriptions/preview.json', json: {} });
      expect(preview.status).toBe(422);
      expect(preview.text).not.toMatch(/not found/i);
    });

    it('clamps per_page to 200 and reads bad paging as the defaults on the new lists', async () => {
      const f = http();
      await seedCatalog(f.engine);
      for (let i = 0; i < 3; i += 1) await subscribe(f, `r${i}`, `r${i}@example.com`);
      const all = (await f.as('acme', { path: '/events.json?per_page=500' })).json<EventBody[]>();
      const defaults = (await f.as('acme', { path: '/events.json?per_page=x&page=-1' })).json<EventBody[]>();
      expect(all.length).toBeGreaterThan(0);
      expect(defaults.map((e) => e.event.id)).toEqual(all.slice(0, 20).map((e) => e.event.id));
    });
  });
});
