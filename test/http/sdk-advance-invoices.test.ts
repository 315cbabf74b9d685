import { AdvanceInvoiceController, ApiError, InvoiceStatus } from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK's `AdvanceInvoiceController` against the server in `chargify` compat:
 * issue, read and void parsed by the SDK's own `Invoice` schema; refusals are the SDK's errors.
 */

async function failure(call: Promise<unknown>): Promise<ApiError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected the SDK call to fail');
}

const CUSTOMER = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

describe('official Maxio SDK: advance invoices', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('issues, reads, refuses a second, forces a new one, voids it, and renews in full', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const site = f.engine.site('acme');
    const id = (await site.subscriptions.create({ productHandle: 'pro', customer: CUSTOMER, creditCard: VISA }))
      .subscription.id;
    const advance = new AdvanceInvoiceController(acmeClient(f));

    expect((await failure(advance.readAdvanceInvoice(id))).statusCode).toBe(404);
    const issued = await sdk(advance.issueAdvanceInvoice(id));
    expect(issued.status).toBe(InvoiceStatus.Open);
    expect(issued.totalAmount).toBe('10.00');
    expect(issued.subscriptionId).toBe(id);
    expect((await sdk(advance.readAdvanceInvoice(id))).uid).toBe(issued.uid);

    const second = await failure(advance.issueAdvanceInvoice(id, { force: false }));
    expect(second.statusCode).toBe(422);
    expect(String(second.body)).toContain('an advance invoice already exists');

    const forced = await sdk(advance.issueAdvanceInvoice(id, { force: true }));
    expect(forced.uid).not.toBe(issued.uid);
    expect((await site.invoices.get(issued.uid!)).status).toBe('voided');

    const voided = await sdk(advance.voidAdvanceInvoice(id, { mVoid: { reason: 'Changed our mind' } }));
    expect(voided).toMatchObject({ uid: forced.uid, status: InvoiceStatus.Voided });
    expect((await failure(advance.readAdvanceInvoice(id))).statusCode).toBe(404);
    expect((await failure(advance.voidAdvanceInvoice(id, { mVoid: { reason: 'Again' } }))).statusCode).toBe(404);

    // Both voided: the renewal bills and collects the full period.
    const charged = f.gateway.chargeCalls;
    f.clock.set('2026-02-15T12:00:00Z');
    await f.engine.runDue();
    expect(f.gateway.chargeCalls).toBe(charged + 1);
    expect((await site.subscriptions.get(id)).balanceInCents).toBe(0);
    const charges = (await site.subscriptions.transactions(id)).filter(
      (l) => l.type === 'charge' && l.createdAt.toISOString() === '2026-02-15T12:00:00.000Z',
    );
    expect(charges.map((l) => l.amountInCents)).toEqual([1000]);
  });

  it('lets the renewal collect an issued advance invoice without billing the period again', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const site = f.engine.site('acme');
    const id = (await site.subscriptions.create({ productHandle: 'pro', customer: CUSTOMER, creditCard: VISA }))
      .subscription.id;
    const advance = new AdvanceInvoiceController(acmeClient(f));
    const issued = await sdk(advance.issueAdvanceInvoice(id));
    f.clock.set('2026-02-15T12:00:00Z');
    await f.engine.runDue();
    expect((await site.invoices.get(issued.uid!)).status).toBe('paid');
    const charges = (await site.subscriptions.transactions(id)).filter((l) => l.type === 'charge');
    // The signup's period and the advance invoice's: nothing more at the renewal.
    expect(charges.map((l) => l.amountInCents)).toEqual([1000, 1000]);
    expect((await failure(advance.readAdvanceInvoice(id))).statusCode).toBe(404);
  });
});
