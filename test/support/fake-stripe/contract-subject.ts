import { ManualClock } from 'billing-engine';
import type { GatewayUnderTest } from 'billing-engine/testing';
import { createStripeGateway } from '../../../gateways/stripe/index.js';
import { type FakeStripe, startFakeStripe } from './fake-stripe.js';

const INTENTS = /^POST \/v1\/payment_intents$/;

/**
 * The Stripe gateway over a fresh local fake, as the gateway contract drives it: cards attached
 * through the fake, faults injected on PaymentIntent creation (a rate limit for `error`, a dropped
 * answer after or before Stripe acted), money counted from the fake's PaymentIntents. `check` runs
 * on the fake before it closes (the drift check, the schema check).
 */
export async function stripeContractSubject(check: (fake: FakeStripe) => void): Promise<GatewayUnderTest> {
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
      check(fake);
      await fake.close();
    },
  };
}
