import { InvoicePaymentMethodType, InvoicesController } from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk } from './support/maxio-sdk.js';

/**
 * Invoice leftovers driven by the official Maxio SDK in `chargify` compat: one external payment
 * spread across several invoices (`POST /invoices/payments.json`, all applications or none), and
 * the preview and refresh of an open invoice's customer information.
 */

/** A subscription with two open invoices (delayed charges of 3.00 and 4.50). */
async function twoOpenInvoices(f: HttpFixture) {
  await seedCatalog(f.engine);
  const reply = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
  const id = reply.json<{ subscription: { id: number } }>().subscription.id;
  const site = f.engine.site('acme');
  await site.ledger.charge(id, { amount: '3.00', memo: 'Setup', delayCapture: true });
  await site.ledger.charge(id, { amount: '4.50', memo: 'Extra', delayCapture: true });
  const { invoices } = await site.invoices.list({ status: 'open', direction: 'asc' });
  expect(invoices.map((i) => i.dueInCents)).toEqual([300, 450]);
  return { id, site, uids: invoices.map((i) => i.uid) };
}

describe('official Maxio SDK 6.1.0: a payment for several invoices', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('pays each invoice its share in one payment', async () => {
    const f = fixture();
    const { id, site, uids } = await twoOpenInvoices(f);
    const invoices = new InvoicesController(acmeClient(f));
    const paid = await sdk(
      invoices.recordPaymentForMultipleInvoices({
        payment: {
          amount: '6.50',
          memo: 'Check 77',
          method: InvoicePaymentMethodType.Check,
          applications: [
            { invoiceUid: uids[0]!, amount: '3.00' },
            { invoiceUid: uids[1]!, amount: '3.50' },
          ],
        },
      }),
    );
    expect(paid.payment).toMatchObject({ totalAmount: '6.50', currencyCode: 'USD' });
    expect(paid.payment.applications?.map((a) => [a.invoiceUid, a.appliedAmount])).toEqual([
      [uids[0], '3.00'],
      [uids[1], '3.50'],
    ]);
    expect((await site.invoices.get(uids[0]!)).status).toBe('paid');
    expect(await site.invoices.get(uids[1]!)).toMatchObject({ status: 'open', dueInCents: 100 });
    expect((await site.subscriptions.get(id)).balanceInCents).toBe(100);
  });

  it('records nothing when one application is refused', async () => {
    const f = fixture();
    const { id, site, uids } = await twoOpenInvoices(f);
    const before = await site.ledger.transactions({ subscriptionId: id });
    const over = await f.as('acme', {
      method: 'POST',
      path: '/invoices/payments.json',
      json: {
        payment: {
          amount: '7.51',
          applications: [
            { invoice_uid: uids[0], amount: '3.00' },
            { invoice_uid: uids[1], amount: '4.51' },
          ],
        },
      },
    });
    expect(over.status).toBe(422);
    expect(over.json()).toEqual({
      errors: [`Applications: the amount applied to invoice ${uids[1]} exceeds its due amount.`],
    });
    const mismatch = await f.as('acme', {
      method: 'POST',
      path: '/invoices/payments.json',
      json: { payment: { amount: '5', applications: [{ invoice_uid: uids[0], amount: '3.00' }] } },
    });
    expect(mismatch.json()).toEqual({ errors: ['Amount: must equal the sum of the applications.'] });
    const unknown = await f.as('acme', {
      method: 'POST',
      path: '/invoices/payments.json',
      json: { payment: { amount: '1', applications: [{ invoice_uid: 'inv_nope', amount: '1' }] } },
    });
    expect(unknown.status).toBe(422);
    expect(await site.ledger.transactions({ subscriptionId: id })).toEqual(before);
    expect((await site.invoices.list({ status: 'open' })).total).toBe(2);
  });

  it("previews and refreshes an open invoice's customer information, and refuses a paid one", async () => {
    const f = fixture();
    const { id, site, uids } = await twoOpenInvoices(f);
    const sub = await site.subscriptions.get(id);
    const invoices = new InvoicesController(acmeClient(f));
    const unchanged = await sdk(invoices.previewCustomerInformationChanges(uids[0]!));
    expect(unchanged.changes).toMatchObject({ payer: null, billingAddress: null });
    await site.customers.update(sub.customer.id, { email: 'new@example.com', organization: 'Analytical Engines' });
    const preview = await sdk(invoices.previewCustomerInformationChanges(uids[0]!));
    expect(preview.changes.payer).toEqual({
      // The SDK reads a null organization as absent.
      before: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      after: { firstName: 'Ada', lastName: 'Lovelace', organization: 'Analytical Engines', email: 'new@example.com' },
    });
    // The preview wrote nothing.
    expect((await site.invoices.get(uids[0]!)).customer.email).toBe('ada@example.com');
    const updated = await sdk(invoices.updateCustomerInformation(uids[0]!));
    expect(updated.customer).toMatchObject({ email: 'new@example.com', organization: 'Analytical Engines' });
    expect((await site.invoices.get(uids[0]!)).customer.email).toBe('new@example.com');
    // The other open invoice keeps its snapshot until it is refreshed too.
    expect((await site.invoices.get(uids[1]!)).customer.email).toBe('ada@example.com');
    // The signup's paid invoice keeps the snapshot it was settled with.
    const { invoices: paid } = await site.invoices.list({ status: 'paid' });
    const refused = await f.as('acme', { method: 'PUT', path: `/invoices/${paid[0]!.uid}/customer_information.json` });
    expect(refused.status).toBe(422);
    const missing = await f.as('acme', { method: 'PUT', path: '/invoices/inv_nope/customer_information.json' });
    expect(missing.status).toBe(404);
  });
});
