import { ManualClock } from 'billing-engine';
import Stripe from 'stripe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStripeGateway, type StripeGateway } from '../../gateways/stripe/index.js';
import { type FakeStripe, startFakeStripe } from '../support/fake-stripe/fake-stripe.js';

const TEST_KEY = 'sk_test_fakeKey123';
const VISA_NUMBER = '4242424242424242';

let fake: FakeStripe;
let clock: ManualClock;
let gateway: StripeGateway;

function gatewayOver(options: Partial<Parameters<typeof createStripeGateway>[0]> = {}): StripeGateway {
  return createStripeGateway({
    apiKey: TEST_KEY,
    stripeConfig: { ...fake.stripeConfig, timeout: 5000 },
    clock,
    ...options,
  });
}

/**
 * A charge request of the engine's shape for a customer with a card attached. Test ids other than
 * `pm_card_visa` are charged as given (Stripe takes test ids with any customer), since the cards
 * that decline everything cannot be attached.
 */
async function chargeRequest(paymentMethod: string, key: string, amountInCents = 2500) {
  const card = await gateway.tokenize({ fullNumber: 'pm_card_visa', expirationMonth: 12, expirationYear: 2034 });
  if (!card.ok) throw new Error(card.message);
  return {
    idempotencyKey: key,
    amountInCents,
    currency: 'USD',
    vaultToken: paymentMethod === 'pm_card_visa' ? card.vaultToken : paymentMethod,
    customerVaultToken: card.customerVaultToken,
    description: 'Renewal: Basic',
  };
}

beforeEach(async () => {
  fake = await startFakeStripe();
  clock = new ManualClock('2026-03-01T00:00:00Z');
  gateway = gatewayOver();
});

afterEach(async () => {
  // Every object the fake sent kept Stripe's published shape.
  expect(fake.drift).toEqual([]);
  await fake.close();
});

describe('Stripe gateway: tokenize', () => {
  it('attaches a Stripe.js PaymentMethod to a new Customer and reports the card', async () => {
    const result = await gateway.tokenize({
      fullNumber: 'pm_card_mastercard',
      expirationMonth: 1,
      expirationYear: 2030,
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    expect(result).toMatchObject({ ok: true, cardType: 'master', lastFour: '4444' });
    if (!result.ok) return;
    expect(result.vaultToken).toMatch(/^pm_fake/);
    const customer = fake.customers.get(result.customerVaultToken!);
    expect(customer?.name).toBe('Ada Lovelace');
    expect(fake.requests.map((r) => `${r.method} ${r.path.split('?')[0]}`)).toEqual([
      'GET /v1/payment_methods/pm_card_mastercard',
      'POST /v1/customers',
      'POST /v1/payment_methods/pm_card_mastercard/attach',
    ]);
  });

  it('gives a merchant the payment_profile_attributes of an attached PaymentMethod', async () => {
    const profile = await gateway.attachPaymentMethod('pm_card_visa', { email: 'ada@example.com' });
    expect(profile).toMatchObject({
      current_vault: 'stripe_connect',
      card_type: 'visa',
      last_four: '4242',
      expiration_month: 12,
      expiration_year: 2034,
    });
    expect(fake.customers.get(profile.customer_vault_token)?.email).toBe('ada@example.com');
    await expect(gateway.attachPaymentMethod('4242424242424242')).rejects.toThrow(/PaymentMethod id/);
  });

  it('refuses a raw card number without sending it anywhere', async () => {
    const result = await gateway.tokenize({ fullNumber: VISA_NUMBER, expirationMonth: 12, expirationYear: 2034 });
    expect(result).toEqual({ ok: false, message: expect.stringMatching(/^Credit card number: .*pm_/) });
    expect(JSON.stringify(result)).not.toContain(VISA_NUMBER);
    expect(fake.requests).toEqual([]);
  });

  it('sends a raw card number only when enabled with a test key', async () => {
    const rawGateway = gatewayOver({ allowRawCardsInTestMode: true });
    const result = await rawGateway.tokenize({ fullNumber: VISA_NUMBER, expirationMonth: 12, expirationYear: 2034 });
    expect(result).toMatchObject({ ok: true, cardType: 'visa', lastFour: '4242' });
    expect(fake.requests.some((r) => r.body.includes(VISA_NUMBER))).toBe(true);
    expect(() => gatewayOver({ apiKey: 'sk_live_realKey', allowRawCardsInTestMode: true })).toThrow(/test key/);
  });

  it('refuses a card the issuer declines when it is attached', async () => {
    const result = await gateway.tokenize({
      fullNumber: 'pm_card_chargeDeclined',
      expirationMonth: 12,
      expirationYear: 2034,
    });
    expect(result).toEqual({ ok: false, message: 'Credit card: Your card was declined.' });
  });

  it('answers an unknown PaymentMethod with a clear refusal', async () => {
    const result = await gateway.tokenize({ fullNumber: 'pm_nope', expirationMonth: 12, expirationYear: 2034 });
    expect(result).toEqual({ ok: false, message: "Credit card: No such PaymentMethod: 'pm_nope'" });
  });
});

describe('Stripe gateway: charge', () => {
  it('confirms an off-session PaymentIntent keyed and tagged with the engine key', async () => {
    const request = await chargeRequest('pm_card_visa', 'renewal:7:2');
    const result = await gatewayOver({ metadata: { site: 'acme' } }).charge(request);
    expect(result).toEqual({ outcome: 'success', transactionId: expect.stringMatching(/^pi_fake/) });
    const intent = fake.paymentIntents.get((result as { transactionId: string }).transactionId)!;
    expect(intent).toMatchObject({
      amount: 2500,
      currency: 'usd',
      status: 'succeeded',
      customer: request.customerVaultToken,
      payment_method: request.vaultToken,
      metadata: {
        site: 'acme',
        billing_engine_key: 'billing-engine:renewal:7:2',
        billing_engine_purpose: 'renewal',
        billing_engine_subscription: '7',
      },
    });
    const sent = fake.requests.find((r) => r.path === '/v1/payment_intents')!;
    expect(sent.idempotencyKey).toBe('billing-engine:renewal:7:2');
    expect(sent.body).toContain('off_session=true');
    expect(sent.body).toContain('confirm=true');
  });

  it('answers a repeated key with the first PaymentIntent and never charges twice', async () => {
    const request = await chargeRequest('pm_card_visa', 'renewal:7:3');
    const first = await gateway.charge(request);
    const again = await gateway.charge(request);
    expect(again).toEqual(first);
    expect(fake.paymentIntents.size).toBe(1);
  });

  it('maps declines to declined with Stripe’s message and decline code', async () => {
    expect(await gateway.charge(await chargeRequest('pm_card_chargeDeclined', 'k:1'))).toEqual({
      outcome: 'declined',
      message: 'Stripe: Your card was declined. (generic_decline)',
    });
    expect(await gateway.charge(await chargeRequest('pm_card_chargeDeclinedInsufficientFunds', 'k:2'))).toEqual({
      outcome: 'declined',
      message: 'Stripe: Your card has insufficient funds. (insufficient_funds)',
    });
    expect(await gateway.charge(await chargeRequest('pm_card_chargeDeclinedExpiredCard', 'k:3'))).toEqual({
      outcome: 'declined',
      message: 'Stripe: Your card has expired. (expired_card)',
    });
    expect(await gateway.charge(await chargeRequest('pm_card_chargeDeclinedProcessingError', 'k:4'))).toMatchObject({
      outcome: 'error',
    });
  });

  it('maps authentication required to a declined outcome that says so', async () => {
    const result = await gateway.charge(await chargeRequest('pm_card_authenticationRequired', 'k:auth'));
    expect(result).toEqual({ outcome: 'declined', message: expect.stringContaining('requires authentication') });
  });

  it('maps a rate limit to a retryable error that took nothing', async () => {
    const request = await chargeRequest('pm_card_visa', 'k:429');
    fake.failNext({ route: /^POST \/v1\/payment_intents$/, status: 429 });
    expect(await gateway.charge(request)).toMatchObject({ outcome: 'error' });
    expect(fake.paymentIntents.size).toBe(0);
    expect(await gateway.charge(request)).toMatchObject({ outcome: 'success' });
  });

  it('maps a 5xx to unknown (Stripe calls its outcome indeterminate), so the key is looked up before any new charge', async () => {
    const request = await chargeRequest('pm_card_visa', 'k:5xx');
    fake.failNext({ route: /^POST \/v1\/payment_intents$/, status: 500 });
    expect(await gateway.charge(request)).toMatchObject({
      outcome: 'unknown',
      message: expect.stringContaining('500'),
    });
    expect(fake.paymentIntents.size).toBe(0);
    // Moments after the call, an empty Search proves nothing (Stripe indexes with a lag): the lookup says so.
    await expect(gateway.lookup(request.idempotencyKey)).rejects.toThrow(/not searchable yet/);
    // The same key again is safe: Stripe answers a replay with the first result, and this one never ran.
    expect(await gateway.charge(request)).toMatchObject({ outcome: 'success' });
    expect(fake.paymentIntents.size).toBe(1);
  });

  it('maps a connection that was never made to error', async () => {
    const request = await chargeRequest('pm_card_visa', 'k:refused');
    const closed = await startFakeStripe();
    await closed.close();
    const unreachable = gatewayOver({ stripeConfig: { ...closed.stripeConfig } });
    expect(await unreachable.charge(request)).toMatchObject({ outcome: 'error' });
  });

  it('replays a lost answer with the same key and gets the one PaymentIntent', async () => {
    const request = await chargeRequest('pm_card_visa', 'k:lost-once');
    fake.dropAfterExecuting({ route: /^POST \/v1\/payment_intents$/ });
    const result = await gateway.charge(request);
    expect(result).toMatchObject({ outcome: 'success' });
    expect(fake.paymentIntents.size).toBe(1);
    expect(fake.requests.filter((r) => r.path === '/v1/payment_intents').length).toBeGreaterThan(1);
  });

  it('answers unknown when every answer is lost, and lookup finds the money taken', async () => {
    const request = await chargeRequest('pm_card_visa', 'k:lost');
    fake.dropAfterExecuting({ route: /^POST \/v1\/payment_intents$/, times: 10 });
    const result = await gateway.charge(request);
    expect(result).toMatchObject({ outcome: 'unknown' });
    expect(fake.paymentIntents.size).toBe(1);
    // The first send and two replays (the default `replayAttempts`), all under the one key. The
    // client's own network retries are off; stripe-node still resends once on a closed connection
    // whatever that setting says, so each of the three may go twice: never more, never another key.
    const sends = fake.requests.filter((r) => r.path === '/v1/payment_intents');
    expect(sends.length).toBeGreaterThanOrEqual(3);
    expect(sends.length).toBeLessThanOrEqual(6);
    expect(new Set(sends.map((r) => r.idempotencyKey))).toEqual(new Set(['billing-engine:k:lost']));
    const [intent] = fake.paymentIntents.values();
    expect(await gateway.lookup('k:lost')).toEqual({ outcome: 'success', transactionId: intent!.id });
  });

  it('answers unknown on a timeout after the request was sent', async () => {
    const request = await chargeRequest('pm_card_visa', 'k:slow');
    const impatient = gatewayOver({ stripeConfig: { ...fake.stripeConfig, timeout: 100 }, replayAttempts: 0 });
    fake.delayNext({ route: /^POST \/v1\/payment_intents$/, ms: 400 });
    expect(await impatient.charge(request)).toMatchObject({ outcome: 'unknown' });
    expect(await impatient.lookup('k:slow')).toMatchObject({ outcome: 'success' });
  });

  it('charges an imported PaymentMethod with no customer by attaching it first', async () => {
    const result = await gateway.charge({
      idempotencyKey: 'signup:abc',
      amountInCents: 1000,
      currency: 'usd',
      vaultToken: 'pm_card_visa',
      customerVaultToken: null,
      description: 'Signup: Basic',
    });
    expect(result).toMatchObject({ outcome: 'success' });
    const [intent] = fake.paymentIntents.values();
    expect(fake.customers.has(String(intent!.customer))).toBe(true);
    expect(intent!.metadata).not.toHaveProperty('billing_engine_subscription');
  });

  it('treats a key reused with other details as the first request', async () => {
    const request = await chargeRequest('pm_card_visa', 'k:reused');
    const first = await gateway.charge(request);
    expect(await gateway.charge({ ...request, amountInCents: 9900 })).toEqual(first);
    expect(fake.paymentIntents.size).toBe(1);
    const idempotencyErrors = fake.requests.filter((r) => r.path === '/v1/payment_intents');
    expect(idempotencyErrors.length).toBe(2);
  });

  it('answers the real client with Stripe’s idempotency error for other parameters', async () => {
    const client = new Stripe(TEST_KEY, { ...fake.stripeConfig, maxNetworkRetries: 0 });
    const customer = await client.customers.create({}, { idempotencyKey: 'same' });
    const replay = await client.customers.create({}, { idempotencyKey: 'same' });
    expect(replay.id).toBe(customer.id);
    const error = await client.customers.create({ email: 'x@example.com' }, { idempotencyKey: 'same' }).catch((e) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(fake.customers.size).toBe(1);
  });
});

describe('Stripe gateway: lookup', () => {
  it('answers undefined for a key Stripe never saw', async () => {
    expect(await gateway.lookup('renewal:1:1')).toBeUndefined();
  });

  it('does not read a lagging Search as "never charged" for a payment sent moments ago', async () => {
    const request = await chargeRequest('pm_card_visa', 'k:lagging');
    fake.pauseSearchIndexing();
    fake.dropAfterExecuting({ route: /^POST \/v1\/payment_intents$/, times: 10 });
    expect(await gateway.charge(request)).toMatchObject({ outcome: 'unknown' });
    await expect(gateway.lookup('k:lagging')).rejects.toThrow(/not searchable yet/);
    fake.indexSearch();
    expect(await gateway.lookup('k:lagging')).toMatchObject({ outcome: 'success' });
  });

  it('reports a declined payment it finds as declined', async () => {
    await gateway.charge(await chargeRequest('pm_card_chargeDeclined', 'k:found-declined'));
    expect(await gateway.lookup('k:found-declined')).toEqual({
      outcome: 'declined',
      message: 'Stripe: Your card was declined.',
    });
  });

  it('keeps one database’s keys apart from another’s on one Stripe account', async () => {
    await gateway.charge(await chargeRequest('pm_card_visa', 'renewal:1:1'));
    const other = gatewayOver({ idempotencyNamespace: 'staging' });
    expect(await other.lookup('renewal:1:1')).toBeUndefined();
    expect(await other.charge(await chargeRequest('pm_card_visa', 'renewal:1:1'))).toMatchObject({
      outcome: 'success',
    });
    expect(fake.paymentIntents.size).toBe(2);
  });
});

describe('Stripe gateway: refund', () => {
  it('refunds part, then the rest, and refuses more than was charged', async () => {
    const charged = await gateway.charge(await chargeRequest('pm_card_visa', 'k:refund', 3000));
    const transactionId = (charged as { transactionId: string }).transactionId;
    const refund = (key: string, amountInCents: number) =>
      gateway.refund({ idempotencyKey: key, chargeTransactionId: transactionId, amountInCents, currency: 'usd' });
    const part = await refund('refund:1', 1000);
    expect(part).toEqual({ outcome: 'success', transactionId: expect.stringMatching(/^re_fake/) });
    expect(await refund('refund:1', 1000)).toEqual(part);
    expect(await refund('refund:2', 2500)).toEqual({
      outcome: 'failure',
      message: 'Stripe: Refund amount (2500) is greater than unrefunded amount on charge (2000)',
    });
    expect(await refund('refund:3', 2000)).toMatchObject({ outcome: 'success' });
    expect([...fake.refunds.values()].map((r) => r.amount)).toEqual([1000, 2000]);
    expect(await refund('refund:4', 1)).toMatchObject({ outcome: 'failure', message: /already been refunded/ });
  });

  it('throws when Stripe gives no answer, so the engine resends it with its key', async () => {
    const charged = await gateway.charge(await chargeRequest('pm_card_visa', 'k:refund-5xx', 3000));
    fake.failNext({ route: /^POST \/v1\/refunds$/, status: 500 });
    const request = {
      idempotencyKey: 'refund:x',
      chargeTransactionId: (charged as { transactionId: string }).transactionId,
      amountInCents: 3000,
      currency: 'usd',
    };
    await expect(gateway.refund(request)).rejects.toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(await gateway.refund(request)).toMatchObject({ outcome: 'success' });
  });
});
