import { type BillingEngine, createBillingEngine, createTestGateway, ManualClock, type Storage } from 'billing-engine';

/** What a simulation did. */
export interface SimulationSummary {
  readonly subscriptions: number;
  readonly months: number;
  readonly renewals: number;
  readonly declines: number;
  readonly revenueInCents: number;
  readonly churned: number;
  readonly active: number;
  readonly seconds: number;
}

/**
 * Generates a book of subscriptions (two products, one with a trial; a coupon on some; seats on
 * some; every tenth card declines its renewals) on a manual clock and bills it for `months`
 * months, so an operator can see the engine's behaviour and speed on their storage.
 */
export async function simulate(
  storage: Storage,
  options: { subscriptions: number; months: number; seed?: number },
): Promise<SimulationSummary> {
  const clock = new ManualClock('2026-01-01T09:00:00Z');
  const gateway = createTestGateway();
  const engine: BillingEngine = createBillingEngine({ storage, clock, gateway });
  await engine.migrate();
  const subdomain = `sim${Date.now().toString(36)}`;
  await engine.sites.create({
    subdomain,
    currency: 'USD',
    timeZone: 'America/Chicago',
    settings: { dunning: { retryCount: 2, retryIntervalHours: 24, finalAction: 'canceled' } },
  });
  const site = engine.site(subdomain);
  const family = await site.catalog.createFamily({ name: 'Simulated' });
  await site.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1900,
    interval: 1,
    intervalUnit: 'month',
  });
  await site.catalog.createProduct(family.id, {
    name: 'Team',
    handle: 'team',
    priceInCents: 9900,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
  });
  const seats = await site.components.create(family.id, {
    kind: 'quantity_based_component',
    name: 'Seats',
    unitName: 'seat',
    pricingScheme: 'per_unit',
    unitPrice: '4.00',
  });
  await site.coupons.create({
    name: 'Launch',
    code: 'LAUNCH',
    percentage: '15',
    recurring: true,
    durationPeriodCount: 3,
    productFamilyId: family.id,
  });
  const started = process.hrtime.bigint();
  for (let i = 0; i < options.subscriptions; i++) {
    const team = i % 3 === 0;
    const created = await site.subscriptions.create({
      productHandle: team ? 'team' : 'basic',
      customer: { firstName: 'Sim', lastName: `Customer ${i}`, email: `sim${i}@example.com` },
      creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2040 },
      ...(i % 4 === 0 ? { couponCode: 'LAUNCH' } : {}),
      ...(team ? { components: [{ componentId: seats.component.id, allocatedQuantity: 1 + (i % 5) }] } : {}),
    });
    // Every tenth customer's card starts declining after signup: renewals and retries fail, dunning cancels.
    if (i % 10 === 9) {
      const id = created.subscription.id;
      gateway.injectFailure({ outcome: 'declined', keyPrefix: `renewal:${id}:`, times: options.months + 1 });
      gateway.injectFailure({ outcome: 'declined', keyPrefix: `dunning:${id}:`, times: 3 * (options.months + 1) });
    }
    if (i % 50 === 49) clock.advance({ hours: 1 });
  }
  let renewals = 0;
  let declines = 0;
  for (let month = 0; month < options.months; month++) {
    clock.advance({ days: 30 });
    const done = await engine.runDue({ batchSize: 200 });
    renewals += done.renewed;
    declines += done.declined;
  }
  let revenueInCents = 0;
  for (let page = 1; ; page++) {
    const payments = await site.ledger.transactions({ types: ['payment'], perPage: 200, page });
    revenueInCents += payments.reduce((sum, p) => sum + p.amountInCents, 0);
    if (payments.length < 200) break;
  }
  const count = async (state: string | string[]) => {
    let n = 0;
    for (let page = 1; ; page++) {
      const rows = await site.subscriptions.list({ state, perPage: 200, page });
      n += rows.length;
      if (rows.length < 200) return n;
    }
  };
  const churned = await count(['cancelled', 'expired']);
  const active = await count('active');
  return {
    subscriptions: options.subscriptions,
    months: options.months,
    renewals,
    declines,
    revenueInCents,
    churned,
    active,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
}
