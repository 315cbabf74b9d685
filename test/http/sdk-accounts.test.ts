import {
  CreatePrepaymentMethod,
  ListPrepaymentDateField,
  PrepaymentMethod,
  ServiceCreditType,
  SubscriptionInvoiceAccountController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkFailure } from './support/maxio-sdk.js';

/**
 * Prepayments, service credits and account balances over HTTP: the official Maxio SDK drives the
 * six SubscriptionInvoiceAccountController methods against the server in `chargify` compat (every
 * response validated by the SDK's schemas), and raw requests check the error bodies.
 */

async function subscribe(f: HttpFixture): Promise<number> {
  await seedCatalog(f.engine);
  const reply = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
  expect(reply.status).toBe(201);
  return reply.json<{ subscription: { id: number } }>().subscription.id;
}

describe('official Maxio SDK 6.1.0: subscription invoice account', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('records, lists and refunds prepayments; issues and deducts service credits; reads balances', async () => {
    const f = fixture();
    const id = await subscribe(f);
    const account = new SubscriptionInvoiceAccountController(acmeClient(f));
    const created = await sdk(
      account.createPrepayment(id, {
        prepayment: { amount: 25.5, memo: 'Check 1001', details: 'By mail', method: CreatePrepaymentMethod.Check },
      }),
    );
    expect(created.prepayment).toMatchObject({
      subscriptionId: id,
      amountInCents: BigInt(2550),
      memo: 'Check 1001',
      startingBalanceInCents: BigInt(0),
      endingBalanceInCents: BigInt(2550),
    });
    expect(created.prepayment.createdAt).toBe('2026-01-15T07:00:00-05:00');
    const listed = await sdk(
      account.listPrepayments({
        subscriptionId: id,
        filter: { dateField: ListPrepaymentDateField.CreatedAt, startDate: '2026-01-15', endDate: '2026-01-15' },
      }),
    );
    expect(listed.prepayments).toHaveLength(1);
    expect(listed.prepayments![0]).toMatchObject({
      id: Number(created.prepayment.id),
      amountInCents: BigInt(2550),
      remainingAmountInCents: BigInt(2550),
      refundedAmountInCents: BigInt(0),
      external: true,
      details: 'By mail',
      paymentType: PrepaymentMethod.Check,
    });
    const refunded = await sdk(
      account.refundPrepayment(id, created.prepayment.id!, {
        refund: { amountInCents: BigInt(550), amount: '5.50', memo: 'Partial return', external: true },
      }),
    );
    expect(refunded.prepayment).toMatchObject({
      remainingAmountInCents: BigInt(2000),
      refundedAmountInCents: BigInt(550),
    });
    const credit = await sdk(account.issueServiceCredit(id, { serviceCredit: { amount: '7.25', memo: 'Outage' } }));
    expect(credit).toMatchObject({
      amountInCents: BigInt(725),
      endingBalanceInCents: BigInt(725),
      entryType: ServiceCreditType.Credit,
      memo: 'Outage',
    });
    const deducted = await account.deductServiceCredit(id, { deduction: { amount: 1, memo: 'Fix' } });
    expect(deducted.statusCode).toBe(201);
    const balances = await sdk(account.readAccountBalances(id));
    expect(balances).toMatchObject({
      openInvoices: { balanceInCents: BigInt(0) },
      pendingDiscounts: { balanceInCents: BigInt(0) },
      serviceCredits: { balanceInCents: BigInt(625) },
      prepayments: { balanceInCents: BigInt(2000) },
    });
    // The ledger holds exactly what the two accounts hold.
    const sub = await f.engine.site('acme').subscriptions.get(id);
    expect(sub.balanceInCents).toBe(-2625);
  });

  it('answers bad input with 422 and the errors list, over-refunds included, and unknown ids with 404', async () => {
    const f = fixture();
    const id = await subscribe(f);
    const account = new SubscriptionInvoiceAccountController(acmeClient(f));
    // The SDK refuses an unknown method itself, so this body goes raw.
    const bad = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${id}/prepayments.json`,
      json: { prepayment: { amount: 0, memo: '', details: 'd', method: 'barter' } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({
      errors: ['Amount: must be greater than 0.', 'Memo: cannot be blank.', 'Method: is not included in the list.'],
    });
    const tooMuch = await sdkFailure(account.deductServiceCredit(id, { deduction: { amount: '0.01' } }));
    expect(tooMuch).toEqual({ status: 422, body: { errors: ['Amount: cannot exceed the service credit balance.'] } });
    const created = await sdk(
      account.createPrepayment(id, {
        prepayment: { amount: 3, memo: 'Cash', details: 'Desk', method: CreatePrepaymentMethod.Cash },
      }),
    );
    const over = await sdkFailure(
      account.refundPrepayment(id, created.prepayment.id!, {
        refund: { amountInCents: BigInt(301), amount: '3.01', memo: 'Too much' },
      }),
    );
    expect(over.status).toBe(422);
    expect((await sdkFailure(account.readAccountBalances(999_999))).status).toBe(404);
    expect(
      (
        await sdkFailure(
          account.refundPrepayment(id, BigInt(999_999), { refund: { amountInCents: null, amount: 1, memo: 'x' } }),
        )
      ).status,
    ).toBe(404);
    // A body without its wrapper is a 422 naming the wrapper.
    const raw = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/service_credits.json`, json: {} });
    expect(raw.status).toBe(422);
    // Another site's key cannot reach the subscription.
    const other = await f.as('globex', { method: 'GET', path: `/subscriptions/${id}/account_balances.json` });
    expect(other.status).toBe(404);
  });

  it('pages the prepayment list and clamps per_page to 200', async () => {
    const f = fixture();
    const id = await subscribe(f);
    const site = f.engine.site('acme');
    for (const amount of ['1', '2', '3']) {
      await site.accounts.createPrepayment(id, { amount, memo: amount, details: 'd', method: 'other' });
    }
    const page2 = await f.as('acme', {
      method: 'GET',
      path: `/subscriptions/${id}/prepayments.json?page=2&per_page=2`,
    });
    expect(page2.status).toBe(200);
    expect(page2.json<{ prepayments: { memo: string }[] }>().prepayments.map((p) => p.memo)).toEqual(['3']);
    const big = await f.as('acme', { method: 'GET', path: `/subscriptions/${id}/prepayments.json?per_page=5000` });
    expect(big.json<{ prepayments: unknown[] }>().prepayments).toHaveLength(3);
    const badDate = await f.as('acme', {
      method: 'GET',
      path: `/subscriptions/${id}/prepayments.json?filter[date_field]=created_at&filter[start_date]=2026-02-30`,
    });
    expect(badDate.status).toBe(422);
  });
});
