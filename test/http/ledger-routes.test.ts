import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { balanceOverHttp, type LineJson, subscribeOverHttp, transactionsOverHttp } from './support/subscribe.js';

const DUPLICATE = { errors: ['DuplicatePrevention::DuplicateSubmissionError'] };

describe('HTTP ledger: charges', () => {
  const http = useHttpFixture();

  it('T1: a 7.00 charge answers 201 and adds a charge and its payment, the latest of 700', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const before = await transactionsOverHttp(http(), s.id);
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/charges.json`,
      json: { charge: { amount: '7.00', memo: 'One Time Charge' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json()).toMatchObject({
      charge: {
        transaction_type: 'charge',
        type: 'Charge',
        kind: 'one_time',
        amount_in_cents: 700,
        memo: 'One Time Charge',
        subscription_id: s.id,
        created_at: '2026-01-15T07:00:00-05:00',
      },
    });
    const after = await transactionsOverHttp(http(), s.id);
    expect(after).toHaveLength(before.length + 2);
    expect(after[0]).toMatchObject({ transaction_type: 'payment', amount_in_cents: 700, success: true });
    expect(after[1]).toMatchObject({ transaction_type: 'charge', amount_in_cents: 700 });
    expect(await balanceOverHttp(http(), s.id)).toBe(0);
  });

  it('amount_in_cents wins over amount; a number amount is read as major units', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const both = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/charges.json`,
      json: { charge: { amount: '99.00', amount_in_cents: '250', memo: 'm' } },
    });
    expect(both.json()).toMatchObject({ charge: { amount_in_cents: 250 } });
    const number = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/charges.json`,
      json: { charge: { amount: 7, memo: 'm' } },
    });
    expect(number.json()).toMatchObject({ charge: { amount_in_cents: 700 } });
  });

  it('delay_capture accrues the charge to the balance without a payment', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const before = await transactionsOverHttp(http(), s.id);
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/charges.json`,
      json: { charge: { amount_in_cents: 300, memo: 'later', delay_capture: '1' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({ charge: { kind: 'delay_capture', amount_in_cents: 300 } });
    expect(await transactionsOverHttp(http(), s.id)).toHaveLength(before.length + 1);
    expect(await balanceOverHttp(http(), s.id)).toBe(300);
  });

  it('a declined card is a 422 with the gateway message and the memo; the balance does not move', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    http().gateway.injectFailure({ outcome: 'declined', keyPrefix: 'charge:' });
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/charges.json`,
      json: { charge: { amount: '7.00', memo: 'One Time Charge' } },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({ errors: ['Bogus Gateway: Forced failure (One Time Charge)'] });
    expect(await balanceOverHttp(http(), s.id)).toBe(0);
    const [latest] = await transactionsOverHttp(http(), s.id);
    expect(latest).toMatchObject({ transaction_type: 'info', success: false, amount_in_cents: 700 });
  });

  it('422 lists every problem; taxed charges and other collection methods are refused', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const blank = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/charges.json`,
      json: { charge: {} },
    });
    expect(blank.status).toBe(422);
    expect(blank.json()).toEqual({ errors: ['Memo: cannot be blank.', 'Amount: is not a number.'] });
    const taxed = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/charges.json`,
      json: { charge: { amount: '1.00', memo: 'm', taxable: true, payment_collection_method: 'invoice' } },
    });
    expect(taxed.status).toBe(422);
    expect(taxed.json()).toEqual({
      errors: [
        'Taxable: taxed charges are not supported by this server yet.',
        "Payment collection method: must be 'automatic'; other collection methods are not supported by this server yet.",
      ],
    });
    const unwrapped = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/charges.json`,
      json: { amount: '1.00', memo: 'm' },
    });
    expect(unwrapped.status).toBe(422);
    expect(unwrapped.json()).toEqual({
      errors: ['Request body: must be a JSON object with a "charge" object, like {"charge":{...}}.'],
    });
  });

  it('a cancelled subscription accepts no charges or credits (422)', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    await http().as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}.json` });
    const charge = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/charges.json`,
      json: { charge: { amount: '1.00', memo: 'm' } },
    });
    expect(charge.status).toBe(422);
    expect(charge.json()).toEqual({ errors: ['This subscription is not eligible to accept charges.'] });
    const credit = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/credits.json`,
      json: { credit: { amount: '1.00', memo: 'm' } },
    });
    expect(credit.json()).toEqual({ errors: ['This subscription is not eligible to accept credits.'] });
  });
});

describe('HTTP ledger: adjustments, credits and external payments', () => {
  const http = useHttpFixture();

  it('an adjustment moves the balance by a signed amount (201, wrapped in adjustment)', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/adjustments.json`,
      json: { adjustment: { amount: '-5.00', memo: 'goodwill' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({
      adjustment: {
        transaction_type: 'adjustment',
        amount_in_cents: -500,
        memo: 'goodwill',
        starting_balance_in_cents: 0,
        ending_balance_in_cents: -500,
      },
    });
    expect(await balanceOverHttp(http(), s.id)).toBe(-500);
  });

  it('T7: adjustment_method target sets the balance to the amount (8800 to 10000 is +1200)', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/adjustments.json`,
      json: { adjustment: { amount_in_cents: 8800, memo: 'setup' } },
    });
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/adjustments.json`,
      json: { adjustment: { amount_in_cents: 10000, adjustment_method: 'target' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({ adjustment: { amount_in_cents: 1200, ending_balance_in_cents: 10000 } });
    const bad = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/adjustments.json`,
      json: { adjustment: { amount_in_cents: 1, adjustment_method: 'sideways', period_range_start: '2026-01-01' } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({ errors: ['Period range start: is not supported by this server yet.'] });
  });

  it('T2: a credit of 7 adds one transaction of -700 (201)', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const before = await transactionsOverHttp(http(), s.id);
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/credits.json`,
      json: { credit: { amount: 7, memo: 'credit' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({ credit: { transaction_type: 'credit', amount_in_cents: -700 } });
    const after = await transactionsOverHttp(http(), s.id);
    expect(after).toHaveLength(before.length + 1);
    expect(after[0]).toMatchObject({
      transaction_type: 'credit',
      amount_in_cents: -700,
      ending_balance_in_cents: -700,
    });
  });

  it('T3: a credit with amount null is a 422 "Amount: is not a number."', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/credits.json`,
      json: { credit: { amount: null, memo: 'credit' } },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({ errors: ['Amount: is not a number.'] });
  });

  it('an external payment lowers the balance (201, kind manual)', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/payments.json`,
      json: { payment: { amount_in_cents: 1000, memo: 'cheque' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({
      payment: { transaction_type: 'payment', kind: 'manual', amount_in_cents: 1000, ending_balance_in_cents: -1000 },
    });
    expect(await balanceOverHttp(http(), s.id)).toBe(-1000);
  });

  it('an external payment answers 422 with the map body, whichever amount field was wrong', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    for (const payment of [{ amount_in_cents: null }, { amount: 'ten' }, { amount: true }]) {
      const reply = await http().as('acme', {
        method: 'POST',
        path: `/subscriptions/${s.id}/payments.json`,
        json: { payment },
      });
      expect(reply.status, JSON.stringify(payment)).toBe(422);
      expect(reply.json(), JSON.stringify(payment)).toEqual({
        errors: { amount_in_cents: ['Amount: is not a number.'] },
      });
    }
    const unwrapped = await http().as('acme', { method: 'POST', path: `/subscriptions/${s.id}/payments.json` });
    expect(unwrapped.status).toBe(422);
    expect(Object.keys(unwrapped.json<{ errors: Record<string, string[]> }>().errors)).toEqual(['payment']);
    // Only validation errors take the map shape: a missing subscription is the usual 404 list.
    const missing = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions/999/payments.json',
      json: { payment: { amount_in_cents: 1 } },
    });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ errors: ['Subscription 999 not found.'] });
  });
});

describe('HTTP ledger: refunds', () => {
  const http = useHttpFixture();

  it('T4: a refund of 7 adds a refund transaction of +700 and leaves the balance unchanged (201)', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const balance = await balanceOverHttp(http(), s.id);
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/refunds.json`,
      json: { refund: { payment_id: s.signupPaymentId, amount: 7, memo: 'Refund' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({
      refund: { transaction_type: 'refund', amount_in_cents: 700, payment_id: s.signupPaymentId, memo: 'Refund' },
    });
    expect(await balanceOverHttp(http(), s.id)).toBe(balance);
    const lines = await transactionsOverHttp(http(), s.id);
    expect(lines.filter((line) => line.transaction_type === 'refund').map((line) => line.amount_in_cents)).toEqual([
      700,
    ]);
    const payment = lines.find((line) => line.id === s.signupPaymentId);
    expect(payment?.refunded_amount_in_cents).toBe(700);
  });

  it('T5: a refund with only payment_id is a 422 "Memo: cannot be blank."', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/refunds.json`,
      json: { refund: { payment_id: s.signupPaymentId } },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({ errors: ['Memo: cannot be blank.'] });
  });

  it('external: 1 at the top level, or refund.external true, records a manual refund without a payment', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const top = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/refunds.json`,
      json: { external: 1, refund: { amount: '2.00', memo: 'refunded by cheque' } },
    });
    expect(top.status).toBe(201);
    expect(top.json()).toMatchObject({ refund: { kind: 'manual', amount_in_cents: 200, payment_id: null } });
    const inner = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/refunds.json`,
      json: { refund: { payment_id: String(s.signupPaymentId), amount: '1.00', memo: 'm', external: true } },
    });
    expect(inner.status).toBe(201);
    expect(inner.json()).toMatchObject({
      refund: { kind: 'manual', amount_in_cents: 100, payment_id: s.signupPaymentId },
    });
    // Without external a refund needs a payment.
    const gateway = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/refunds.json`,
      json: { external: 0, refund: { amount: '1.00', memo: 'm' } },
    });
    expect(gateway.status).toBe(422);
    expect(gateway.json()).toEqual({ errors: ['Payment: cannot be blank.'] });
  });

  it('a refund beyond the payment is a 422; an unknown payment is a 404', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const over = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/refunds.json`,
      json: { refund: { payment_id: s.signupPaymentId, amount: '10.01', memo: 'm' } },
    });
    expect(over.status).toBe(422);
    expect(over.json()).toEqual({ errors: ['Amount: cannot exceed the remaining refundable amount.'] });
    const unknown = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/refunds.json`,
      json: { refund: { payment_id: 9999, amount: '1.00', memo: 'm' } },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toEqual({ errors: ['Payment 9999 not found.'] });
  });
});

describe('HTTP ledger: uniqueness_token (T6)', () => {
  const http = useHttpFixture();

  it('a repeated token is a 409 for a charge, an adjustment, a credit, a payment and a refund; nothing is written', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const cases: [string, unknown][] = [
      ['charges', { charge: { amount: '1.00', memo: 'm' } }],
      ['adjustments', { adjustment: { amount: '1.00', memo: 'm' } }],
      ['credits', { credit: { amount: '1.00', memo: 'm' } }],
      ['payments', { payment: { amount: '1.00', memo: 'm' } }],
      ['refunds', { refund: { payment_id: s.signupPaymentId, amount: '1.00', memo: 'm' } }],
    ];
    for (const [path, wrapped] of cases) {
      const json = { ...(wrapped as object), uniqueness_token: `token-${path}` };
      const first = await http().as('acme', { method: 'POST', path: `/subscriptions/${s.id}/${path}.json`, json });
      expect(first.status, path).toBe(201);
      const count = (await transactionsOverHttp(http(), s.id)).length;
      const second = await http().as('acme', { method: 'POST', path: `/subscriptions/${s.id}/${path}.json`, json });
      expect(second.status, path).toBe(409);
      expect(second.json(), path).toEqual(DUPLICATE);
      expect(await transactionsOverHttp(http(), s.id), path).toHaveLength(count);
    }
  });

  it('one token serves every command kind, and a rejected command leaves its token free', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const adjust = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/adjustments.json`,
      json: { adjustment: { amount: '1.00' }, uniqueness_token: 42 },
    });
    expect(adjust.status).toBe(201);
    const credit = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/credits.json`,
      json: { credit: { amount: '1.00', memo: 'm' }, uniqueness_token: '42' },
    });
    expect(credit.status).toBe(409);
    const rejected = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/credits.json`,
      json: { credit: { amount: '1.00' }, uniqueness_token: 'retry-me' },
    });
    expect(rejected.status).toBe(422);
    const retried = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/credits.json`,
      json: { credit: { amount: '1.00', memo: 'm' }, uniqueness_token: 'retry-me' },
    });
    expect(retried.status).toBe(201);
    const badToken = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/credits.json`,
      json: { credit: { amount: '1.00', memo: 'm' }, uniqueness_token: { nested: true } },
    });
    expect(badToken.status).toBe(422);
    expect(badToken.json()).toEqual({ errors: ['Uniqueness token: must be a string.'] });
  });
});

describe('HTTP ledger: transaction lists', () => {
  const http = useHttpFixture();

  async function twoSubscriptions() {
    await seedCatalog(http().engine);
    const first = await subscribeOverHttp(http());
    http().clock.advance({ days: 2 });
    const second = await subscribeOverHttp(http(), {
      customer_attributes: { first_name: 'B', last_name: 'C', email: 'b@c.co' },
    });
    await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${first.id}/credits.json`,
      json: { credit: { amount: '1.00', memo: 'm' } },
    });
    return { first, second };
  }

  const list = async (path: string) => {
    const reply = await http().as('acme', { path });
    expect(reply.status, `${path}: ${reply.text}`).toBe(200);
    return reply.json<{ transaction: LineJson & { subscription_id: number } }[]>().map((item) => item.transaction);
  };

  it('GET /transactions.json lists every subscription of the site, newest first, as a bare array', async () => {
    const { first, second } = await twoSubscriptions();
    const lines = await list('/transactions.json');
    expect(lines.map((l) => [l.subscription_id, l.transaction_type])).toEqual([
      [first.id, 'credit'],
      [second.id, 'payment'],
      [second.id, 'charge'],
      [first.id, 'payment'],
      [first.id, 'charge'],
    ]);
    const ids = lines.map((l) => l.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(await list('/transactions.json?per_page=2&page=2')).toEqual(lines.slice(2, 4));
    expect(await list('/transactions.json?direction=asc&per_page=1')).toEqual([lines.at(-1)]);
  });

  it('filters by kinds[], id bounds (inclusive) and dates in the site zone; the subscription list keeps to one', async () => {
    const { first } = await twoSubscriptions();
    const all = await list('/transactions.json');
    const types = (lines: LineJson[]) => lines.map((l) => l.transaction_type);
    expect(types(await list('/transactions.json?kinds[]=payment&kinds[]=credit'))).toEqual([
      'credit',
      'payment',
      'payment',
    ]);
    const [newest, , middle] = all;
    expect((await list(`/transactions.json?since_id=${middle?.id}&max_id=${newest?.id}`)).map((l) => l.id)).toEqual([
      newest?.id,
      all[1]?.id,
      middle?.id,
    ]);
    // The first signup was on Jan 15 (New York), the second and the credit on Jan 17.
    expect(await list('/transactions.json?since_date=2026-01-16')).toHaveLength(3);
    expect(await list('/transactions.json?until_date=2026-01-15')).toHaveLength(2);
    const mine = await list(`/subscriptions/${first.id}/transactions.json?order_by=created_at&direction=asc`);
    expect(types(mine)).toEqual(['charge', 'payment', 'credit']);
    expect(new Set(mine.map((l) => l.subscription_id))).toEqual(new Set([first.id]));
  });

  it('422 for a type that does not exist or a bad date; lenient paging; 404 for an unknown subscription', async () => {
    await twoSubscriptions();
    const kind = await http().as('acme', { path: '/transactions.json?kinds[]=bogus' });
    expect(kind.status).toBe(422);
    expect(kind.json()).toEqual({ errors: ["Kinds: 'bogus' is not a transaction type."] });
    const date = await http().as('acme', { path: '/transactions.json?since_date=yesterday' });
    expect(date.status).toBe(422);
    expect(await list('/transactions.json?page=abc&per_page=0')).toHaveLength(5);
    const missing = await http().as('acme', { path: '/subscriptions/999/transactions.json' });
    expect(missing.status).toBe(404);
  });
});
