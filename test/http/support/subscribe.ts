import { expect } from 'vitest';
import { type HttpFixture, signupBody } from './http-fixture.js';

/** What a test needs of a subscription signed up over HTTP. */
export interface Subscribed {
  readonly id: number;
  readonly customerId: number;
  readonly signupPaymentId: number;
  readonly body: Record<string, unknown>;
}

/**
 * Signs up `productHandle` (default `pro`, which `seedCatalog` creates) on `site` over HTTP with a
 * new customer and a good card, asserting the 201; `extra` fields go into the `subscription` wrapper.
 */
export async function subscribeOverHttp(
  fixture: HttpFixture,
  extra: Record<string, unknown> = {},
  site: 'acme' | 'globex' = 'acme',
  productHandle = 'pro',
): Promise<Subscribed> {
  const base = signupBody(productHandle) as { subscription: Record<string, unknown> };
  const reply = await fixture.as(site, {
    method: 'POST',
    path: '/subscriptions.json',
    json: { subscription: { ...base.subscription, ...extra } },
  });
  expect(reply.status, reply.text).toBe(201);
  const subscription = reply.json<{ subscription: Record<string, unknown> }>().subscription;
  return {
    id: subscription.id as number,
    customerId: (subscription.customer as { id: number }).id,
    signupPaymentId: subscription.signup_payment_id as number,
    body: subscription,
  };
}

/** A wrapped ledger line as the ledger routes and transaction lists answer it. */
export interface LineJson {
  readonly id: number;
  readonly transaction_type: string;
  readonly kind: string | null;
  readonly amount_in_cents: number;
  readonly memo: string;
  readonly success: boolean | null;
  readonly starting_balance_in_cents: number;
  readonly ending_balance_in_cents: number;
  readonly payment_id: number | null;
  readonly refunded_amount_in_cents: number;
  readonly created_at: string;
}

/** The subscription's transactions over HTTP, newest first (the list's default order). */
export async function transactionsOverHttp(fixture: HttpFixture, id: number, query = ''): Promise<LineJson[]> {
  const reply = await fixture.as('acme', { path: `/subscriptions/${id}/transactions.json${query}` });
  expect(reply.status, reply.text).toBe(200);
  return reply.json<{ transaction: LineJson }[]>().map((item) => item.transaction);
}

/** The subscription's balance over HTTP. */
export async function balanceOverHttp(fixture: HttpFixture, id: number): Promise<number> {
  const reply = await fixture.as('acme', { path: `/subscriptions/${id}.json` });
  return reply.json<{ subscription: { balance_in_cents: number } }>().subscription.balance_in_cents;
}
