import {
  ApiError,
  type Client,
  ComponentsController,
  CouponsController,
  CustomersController,
  Direction,
  EventKey,
  EventsController,
  IntervalUnit,
  PricingScheme,
  ProductFamiliesController,
  ProductsController,
  SitesController,
  SortingDirection,
  SubscriptionStatusController,
  SubscriptionsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK (6.1.0) driving this round's endpoints against the server in `chargify`
 * compat: events polling, customer lookup and search, a customer's subscriptions, retry, resume
 * date and activation, catalog lists, component lookup and update, family coupon paths, and the
 * site. Every response is validated by the SDK's own schemas; one it cannot parse fails here.
 */

/** The status of an SDK call that is expected to fail. */
async function failure(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return error.statusCode;
    throw error;
  }
  throw new Error('expected the SDK call to fail');
}

/** A family, a monthly product and a product with a 14-day free trial, through the SDK. */
async function catalog(c: Client) {
  const family = await sdk(
    new ProductFamiliesController(c).createProductFamily({ productFamily: { name: 'Plans', handle: 'plans' } }),
  );
  const familyId = family.productFamily?.id as number;
  const products = new ProductsController(c);
  for (const [handle, trial] of [
    ['pro', false],
    ['trial', true],
  ] as const) {
    await sdk(
      products.createProduct(String(familyId), {
        product: {
          name: handle,
          handle,
          description: handle,
          priceInCents: BigInt(1000),
          interval: 1,
          intervalUnit: IntervalUnit.Month,
          ...(trial ? { trialPriceInCents: BigInt(0), trialInterval: 14, trialIntervalUnit: IntervalUnit.Day } : {}),
        },
      }),
    );
  }
  return familyId;
}

async function signup(c: Client, productHandle: string, reference: string) {
  const created = await sdk(
    new SubscriptionsController(c).createSubscription({
      subscription: {
        productHandle,
        customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: `${reference}@example.com`, reference },
        creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
      },
    }),
  );
  return created.subscription!;
}

describe('official Maxio SDK 6.1.0: this round of endpoints', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('polls events, counts them and reads one subscription’s events', async () => {
    const f = fixture();
    const c = acmeClient(f);
    await catalog(c);
    const sub = await signup(c, 'pro', 'ada');
    await sdk(new SubscriptionStatusController(c).cancelSubscription(sub.id as number));
    const events = new EventsController(c);
    const all = await sdk(events.listEvents({ direction: Direction.Desc, perPage: 200 }));
    expect(all[0]?.event.key).toBe(EventKey.SubscriptionStateChange);
    expect(all[0]?.event.eventSpecificData).toEqual({
      previousSubscriptionState: 'active',
      newSubscriptionState: 'canceled',
    });
    expect(all[0]?.event.subscriptionId).toBe(sub.id);
    expect(all[0]?.event.customerId).toBe(sub.customer?.id);
    const firstId = all[all.length - 1]!.event.id;
    const polled = await sdk(events.listEvents({ sinceId: firstId, direction: Direction.Asc, perPage: 2 }));
    expect(polled.map((e) => e.event.id)).toEqual([all[all.length - 1]!.event.id, all[all.length - 2]!.event.id]);
    const signups = await sdk(events.listEvents({ filter: [EventKey.SignupSuccess, EventKey.CustomerCreate] }));
    expect(signups.map((e) => e.event.key).sort()).toEqual(['customer_create', 'signup_success']);
    expect(await sdk(events.readEventsCount({ filter: [EventKey.SignupSuccess] }))).toEqual({ count: 1 });
    const mine = await sdk(events.listSubscriptionEvents({ subscriptionId: sub.id as number }));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((e) => e.event.subscriptionId === sub.id)).toBe(true);
  });

  it('finds a customer by reference (find-or-create), searches, and lists their subscriptions', async () => {
    const f = fixture();
    const c = acmeClient(f);
    await catalog(c);
    const sub = await signup(c, 'pro', 'ada-ref');
    await signup(c, 'pro', 'bob-ref');
    const customers = new CustomersController(c);
    const found = await sdk(customers.readCustomerByReference('ada-ref'));
    expect(found.customer.id).toBe(sub.customer?.id);
    expect(await failure(customers.readCustomerByReference('nobody'))).toBe(404);
    const searched = await sdk(customers.listCustomers({ q: 'bob-ref', direction: SortingDirection.Desc }));
    expect(searched.map((x) => x.customer.reference)).toEqual(['bob-ref']);
    const theirs = await sdk(customers.listCustomerSubscriptions(found.customer.id as number));
    expect(theirs.map((s) => s.subscription?.id)).toEqual([sub.id]);
  });

  it('retries a past-due subscription, moves a resume date and activates a trial', async () => {
    const f = fixture();
    const c = acmeClient(f);
    await catalog(c);
    const status = new SubscriptionStatusController(c);
    const pro = await signup(c, 'pro', 'p');
    f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
    f.clock.set('2026-02-15T13:00:00Z');
    await f.engine.runDue();
    const retried = await sdk(status.retrySubscription(pro.id as number));
    expect(retried.subscription?.state).toBe('active');
    expect(retried.subscription?.balanceInCents).toBe(BigInt(0));

    await sdk(status.pauseSubscription(pro.id as number));
    const moved = await sdk(
      status.updateAutomaticSubscriptionResumption(pro.id as number, {
        hold: { automaticallyResumeAt: '2026-03-01T00:00:00Z' },
      }),
    );
    expect(moved.subscription?.state).toBe('on_hold');

    const trial = await signup(c, 'trial', 't');
    expect(trial.state).toBe('trialing');
    const active = await sdk(new SubscriptionsController(c).activateSubscription(trial.id as number));
    expect(active.subscription?.state).toBe('active');
  });

  it('lists products and components, finds and updates a component, and serves family coupon paths', async () => {
    const f = fixture();
    const c = acmeClient(f);
    const familyId = await catalog(c);
    const products = await sdk(new ProductsController(c).listProducts({ perPage: 1, page: 2 }));
    expect(products.map((p) => p.product.handle)).toEqual(['trial']);

    const components = new ComponentsController(c);
    const created = await sdk(
      components.createQuantityBasedComponent(String(familyId), {
        quantityBasedComponent: {
          name: 'Seats',
          unitName: 'seat',
          pricingScheme: PricingScheme.PerUnit,
          unitPrice: '5',
          handle: 'seats',
        },
      }),
    );
    const componentId = created.component.id as number;
    expect((await sdk(components.listComponents({}))).map((x) => x.component.id)).toEqual([componentId]);
    expect((await sdk(components.findComponent('seats'))).component.id).toBe(componentId);
    const updated = await sdk(components.updateComponent(String(componentId), { component: { name: 'Users' } }));
    expect(updated.component.name).toBe('Users');

    const coupons = new CouponsController(c);
    const coupon = await sdk(
      coupons.createCoupon(familyId, {
        coupon: { name: 'Ten', code: 'TEN', description: 'Ten off', percentage: '10' },
      }),
    );
    const couponId = coupon.coupon?.id as number;
    const listed = await sdk(coupons.listCouponsForProductFamily({ productFamilyId: familyId }));
    expect(listed.map((x) => x.coupon?.id)).toEqual([couponId]);
    expect((await sdk(coupons.readCoupon(familyId, couponId))).coupon?.code).toBe('TEN');
    const renamed = await sdk(coupons.updateCoupon(familyId, couponId, { coupon: { name: 'Tenner' } }));
    expect(renamed.coupon?.name).toBe('Tenner');
    const archived = await sdk(coupons.archiveCoupon(familyId, couponId));
    expect(archived.coupon?.archivedAt).toBeTruthy();
  });

  it('reads the site', async () => {
    const f = fixture();
    const site = await sdk(new SitesController(acmeClient(f)).readSite());
    expect(site.site).toMatchObject({ id: f.sites.acme.site.id, subdomain: 'acme', currency: 'USD', test: true });
  });
});
