/**
 * A renewal reads what it pays, not the subscription's whole history (issue 18): the invoices a
 * post reads are its open ones (and, for a payment's webhook, the ones its payment changed), so
 * the rows read per renewal stay flat as the invoices pile up; and a payment reconciled after a
 * lost answer still names the invoice it paid in its webhook.
 */
import {
  type BillingEngine,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type Storage,
  type StorageTransaction,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it } from 'vitest';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** A storage whose transactions count the invoice rows their invoice reads return. */
function countingInvoiceReads(inner: Storage): { storage: Storage; rows: () => number } {
  let rows = 0;
  const count = <T>(result: T): T => {
    if (Array.isArray(result)) rows += result.length;
    else if (result && typeof result === 'object' && 'invoices' in result)
      rows += (result as { invoices: unknown[] }).invoices.length;
    else if (result !== undefined) rows += 1;
    return result;
  };
  const wrap = (tx: StorageTransaction): StorageTransaction =>
    new Proxy(tx, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'invoices') return value;
        return new Proxy(value as object, {
          get(invoices, name, r) {
            const method = Reflect.get(invoices, name, r);
            if (typeof method !== 'function' || !/^(list|find)/.test(String(name))) return method;
            return async (...args: unknown[]) => count(await method.apply(invoices, args));
          },
        });
      },
    });
  const storage: Storage = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'transaction')
        return (work: (tx: StorageTransaction) => Promise<unknown>, options?: unknown) =>
          target.transaction((tx) => work(wrap(tx)), options as never);
      return Reflect.get(target, property, receiver);
    },
  });
  return { storage, rows: () => rows };
}

async function monthlySubscriber(engine: BillingEngine) {
  await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = engine.site('acme');
  await acme.webhooks.createEndpoint({
    url: 'https://hooks.example.com/billing',
    webhookSubscriptions: ['payment_success', 'payment_failure'],
  });
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1250,
    interval: 1,
    intervalUnit: 'month',
  });
  const { subscription } = await acme.subscriptions.create({
    productHandle: 'basic',
    customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
    creditCard: VISA,
  });
  return { acme, subscription };
}

describe('invoice reads of a renewal', () => {
  it('stay flat as the paid invoices pile up', async () => {
    const clock = new ManualClock('2026-01-01T10:00:00Z');
    const counted = countingInvoiceReads(createMemoryStorage());
    const engine = createBillingEngine({ storage: counted.storage, clock, gateway: createTestGateway() });
    await monthlySubscriber(engine);
    const rowsOfRenewal = async (month: number) => {
      clock.set(`2027-${String(month).padStart(2, '0')}-01T11:00:00Z`.replace('2027-13', '2028-01'));
      const before = counted.rows();
      const summary = await engine.runDue();
      expect(summary.renewed).toBeGreaterThan(0);
      return counted.rows() - before;
    };
    // A year of renewals first, so that twelve paid invoices lie behind the one being renewed.
    for (let month = 2; month <= 12; month++) {
      clock.set(`2026-${String(month).padStart(2, '0')}-01T11:00:00Z`);
      await engine.runDue();
    }
    const early = await rowsOfRenewal(1);
    for (let month = 2; month <= 12; month++) await rowsOfRenewal(month);
    const late = await rowsOfRenewal(13);
    expect((await engine.site('acme').invoices.list({ perPage: 200 })).invoices.length).toBe(25);
    expect(late).toBe(early);
    // Each renewal reads its own fresh invoice a few times, never the paid ones behind it.
    expect(late).toBeLessThan(12);
  });

  it('names the paid invoice in the webhook of a payment reconciled after a lost answer', async () => {
    const clock = new ManualClock('2026-01-01T10:00:00Z');
    const gateway = createTestGateway();
    const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway });
    const { acme } = await monthlySubscriber(engine);
    gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'renewal:' });
    clock.set('2026-02-01T11:00:00Z');
    await engine.runDue();
    // The reconciliation asks the gateway later and finds the money taken.
    clock.set('2026-02-02T11:00:00Z');
    await engine.runDue();
    const paid = (await acme.invoices.list({ status: 'paid' })).invoices;
    expect(paid).toHaveLength(2);
    const renewalInvoice = paid.at(-1)!;
    const successes = (await acme.webhooks.list())
      .filter((w) => w.event === 'payment_success')
      .map((w) => new URLSearchParams(w.body));
    expect(successes).toHaveLength(2);
    expect(successes[1]?.get('payload[invoice][uid]')).toBe(renewalInvoice.uid);
    expect(successes[1]?.get('payload[invoice][due_amount]')).toBe('0.00');
  });
});
