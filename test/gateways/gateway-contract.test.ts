import { createTestGateway, ManualClock } from 'billing-engine';
import { runGatewayContract } from 'billing-engine/testing';
import { afterEach, beforeEach, describe, it } from 'vitest';
import { createStripeGateway } from '../../gateways/stripe/index.js';
import { startFakeStripe } from '../support/fake-stripe/fake-stripe.js';

const api = { describe, it, beforeEach, afterEach };
const INTENTS = /^POST \/v1\/payment_intents$/;

runGatewayContract(api, {
  name: 'test gateway',
  // Refunds are idempotent by key on the test gateway too, as the engine resends them by key.
  idempotentRefunds: true,
  async create() {
    const gateway = createTestGateway({ recordCalls: true });
    return {
      gateway,
      async vault(card) {
        if (card === 'needs_authentication') return undefined;
        const number = card === 'succeeds' ? '4111111111111111' : '2';
        const tokenized = await gateway.tokenize({ fullNumber: number, expirationMonth: 12, expirationYear: 2034 });
        if (!tokenized.ok) throw new Error(tokenized.message);
        return { vaultToken: tokenized.vaultToken, customerVaultToken: tokenized.customerVaultToken };
      },
      inject(fault) {
        if (fault === 'error') gateway.injectFailure({ outcome: 'error' });
        else gateway.injectFailure({ outcome: 'unknown', charged: fault === 'lost_after_charge' });
      },
      moneyTakenFor: (key) => gateway.calls.filter((c) => c.idempotencyKey === key && c.tookMoney).length,
      settle: async () => {},
      dispose: async () => {},
    };
  },
});

runGatewayContract(api, {
  name: 'Stripe gateway over the local fake',
  idempotentRefunds: true,
  async create() {
    const fake = await startFakeStripe();
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const gateway = createStripeGateway({
      apiKey: 'sk_test_contract',
      stripeConfig: { ...fake.stripeConfig, timeout: 5000 },
      clock,
    });
    return {
      gateway,
      async vault(card) {
        const attached = await gateway.attachPaymentMethod(
          card === 'needs_authentication' ? 'pm_card_authenticationRequired' : 'pm_card_visa',
        );
        // A card that declines everything cannot be attached; Stripe charges a test id with any customer.
        const vaultToken = card === 'declines' ? 'pm_card_chargeDeclined' : attached.vault_token;
        return { vaultToken, customerVaultToken: attached.customer_vault_token };
      },
      inject(fault) {
        // A rate limit: Stripe did nothing (a 5xx is indeterminate, so the gateway answers it `unknown`).
        if (fault === 'error') fake.failNext({ route: INTENTS, status: 429 });
        else if (fault === 'lost_after_charge') fake.dropAfterExecuting({ route: INTENTS, times: 100 });
        else fake.dropBeforeExecuting({ route: INTENTS, times: 100 });
      },
      moneyTakenFor: (key) =>
        [...fake.paymentIntents.values()].filter(
          (i) => i.metadata.billing_engine_key === `billing-engine:${key}` && i.status === 'succeeded',
        ).length,
      async settle() {
        fake.clearFaults();
        fake.indexSearch();
        clock.advance({ minutes: 11 });
      },
      async dispose() {
        if (fake.drift.length > 0) throw new Error(`The fake drifted from Stripe's shapes: ${fake.drift.join('; ')}`);
        await fake.close();
      },
    };
  },
});
