import { createTestGateway } from 'billing-engine';
import { runGatewayContract } from 'billing-engine/testing';
import { afterEach, beforeEach, describe, it } from 'vitest';
import { stripeContractSubject } from '../support/fake-stripe/contract-subject.js';

const api = { describe, it, beforeEach, afterEach };
const _INTENTS = /^POST \/v1\/payment_intents$/;

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
  create: () =>
    stripeContractSubject((fake) => {
      if (fake.drift.length > 0) throw new Error(`The fake drifted from Stripe's shapes: ${fake.drift.join('; ')}`);
    }),
});
