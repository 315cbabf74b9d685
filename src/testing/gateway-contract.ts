import assert from 'node:assert/strict';
import type { ChargeRequest, PaymentGateway } from 'billing-engine';

/**
 * The gateway port's contract: what the engine relies on from every payment gateway (success,
 * decline, authentication required, retryable errors, lost answers with and without money taken,
 * lookup by key, refunds over and under, idempotent replays). Like the storage conformance suite,
 * the test runner is passed in and the checks use `node:assert`, so it runs under any runner.
 */
export interface GatewayContractApi {
  readonly describe: (name: string, fn: () => void) => void;
  readonly it: (name: string, fn: () => Promise<void>) => void;
  readonly beforeEach: (fn: () => Promise<void> | void) => void;
  readonly afterEach: (fn: () => Promise<void> | void) => void;
}

/** Kinds of card a harness provides. */
export type ContractCard = 'succeeds' | 'declines' | 'needs_authentication';

/** A fault a harness injects into its gateway's next charge. */
export type ContractFault =
  /** The gateway refuses before doing anything (5xx, rate limit): nothing is taken. */
  | 'error'
  /** The answer is lost after the gateway took the money. */
  | 'lost_after_charge'
  /** The answer is lost before the gateway saw the request: nothing is taken. */
  | 'lost_before_charge';

/** One gateway under test, made fresh for each case. */
export interface GatewayUnderTest {
  readonly gateway: PaymentGateway;
  /** A vault (token and customer token) for a card of this kind, or undefined when the gateway has no such card. */
  vault(card: ContractCard): Promise<Pick<ChargeRequest, 'vaultToken' | 'customerVaultToken'> | undefined>;
  /** Makes the next charge call meet this fault. */
  inject(fault: ContractFault): void;
  /** How many times money was taken for this key, as the gateway's own records say. */
  moneyTakenFor(key: string): number;
  /** Lets time pass until lookups are authoritative (for gateways whose search lags). */
  settle(): Promise<void>;
  dispose(): Promise<void>;
}

export interface GatewayContractHarness {
  readonly name: string;
  create(): Promise<GatewayUnderTest>;
  /** Whether `refund` is idempotent by its key (a replayed refund moves no more money). */
  readonly idempotentRefunds: boolean;
}

/** Registers the contract's cases for one gateway. */
export function runGatewayContract(api: GatewayContractApi, harness: GatewayContractHarness): void {
  let current: GatewayUnderTest | undefined;
  const under = () => {
    if (!current) throw new Error('The gateway contract runs only inside its describe.');
    return current;
  };
  let sequence = 0;
  const key = (purpose: string) => `${purpose}:${++sequence}:contract`;

  async function request(card: ContractCard, idempotencyKey: string, amountInCents = 3000): Promise<ChargeRequest> {
    const vault = await under().vault(card);
    assert.ok(vault, `the harness gives a ${card} card`);
    return { idempotencyKey, amountInCents, currency: 'USD', description: 'Contract', ...vault };
  }

  /** A case that needs a card some gateways cannot make: registered as skipped with the reason printed. */
  function itWithCard(card: ContractCard, name: string, fn: () => Promise<void>) {
    api.it(name, async () => {
      if ((await under().vault(card)) === undefined) {
        console.info(`[gateway contract:${harness.name}] "${name}" does not apply: the gateway has no ${card} card`);
        return;
      }
      await fn();
    });
  }

  api.describe(`gateway contract: ${harness.name}`, () => {
    api.beforeEach(async () => {
      current = await harness.create();
    });
    api.afterEach(async () => {
      const done = current;
      current = undefined;
      await done?.dispose();
    });

    api.it('charges a good card once, and lookup finds that charge by key', async () => {
      const k = key('renewal');
      const result = await under().gateway.charge(await request('succeeds', k));
      assert.equal(result.outcome, 'success');
      assert.deepEqual(await under().gateway.lookup(k), result);
      assert.equal(under().moneyTakenFor(k), 1);
    });

    api.it('answers a replayed key with the first charge and takes no more money', async () => {
      const k = key('renewal');
      const charge = await request('succeeds', k);
      const first = await under().gateway.charge(charge);
      const again = await under().gateway.charge(charge);
      assert.deepEqual(again, first);
      assert.equal(under().moneyTakenFor(k), 1);
    });

    api.it('declines a refused card with a message, takes nothing, and lookup never says success', async () => {
      const k = key('dunning');
      const result = await under().gateway.charge(await request('declines', k));
      assert.equal(result.outcome, 'declined');
      assert.ok(result.outcome === 'declined' && result.message.length > 0);
      assert.equal(under().moneyTakenFor(k), 0);
      assert.notEqual((await under().gateway.lookup(k))?.outcome, 'success');
    });

    itWithCard('needs_authentication', 'declines a card that needs authentication, saying so', async () => {
      const k = key('renewal');
      const result = await under().gateway.charge(await request('needs_authentication', k));
      assert.equal(result.outcome, 'declined');
      assert.match(result.outcome === 'declined' ? result.message : '', /authenticat/i);
      assert.equal(under().moneyTakenFor(k), 0);
    });

    api.it('answers a gateway failure with a retryable error that took nothing', async () => {
      const k = key('charge');
      const charge = await request('succeeds', k);
      under().inject('error');
      assert.equal((await under().gateway.charge(charge)).outcome, 'error');
      assert.equal(under().moneyTakenFor(k), 0);
      assert.equal((await under().gateway.charge(charge)).outcome, 'success');
      assert.equal(under().moneyTakenFor(k), 1);
    });

    api.it('answers a lost answer with money taken as unknown; lookup and replays find the one charge', async () => {
      const k = key('renewal');
      const charge = await request('succeeds', k);
      under().inject('lost_after_charge');
      assert.equal((await under().gateway.charge(charge)).outcome, 'unknown');
      await under().settle();
      const found = await under().gateway.lookup(k);
      assert.equal(found?.outcome, 'success');
      assert.deepEqual(await under().gateway.charge(charge), found);
      assert.equal(under().moneyTakenFor(k), 1);
    });

    api.it('answers a lost answer with no money taken as unknown; lookup then says never seen', async () => {
      const k = key('renewal');
      const charge = await request('succeeds', k);
      under().inject('lost_before_charge');
      assert.equal((await under().gateway.charge(charge)).outcome, 'unknown');
      await under().settle();
      assert.equal(await under().gateway.lookup(k), undefined);
      assert.equal(under().moneyTakenFor(k), 0);
    });

    api.it('refunds under the charge in parts and refuses a refund over what is left', async () => {
      const charged = await under().gateway.charge(await request('succeeds', key('charge'), 3000));
      assert.equal(charged.outcome, 'success');
      const id = charged.outcome === 'success' ? charged.transactionId : '';
      const refund = (amountInCents: number) =>
        under().gateway.refund({
          idempotencyKey: key('refund'),
          chargeTransactionId: id,
          amountInCents,
          currency: 'USD',
        });
      assert.equal((await refund(3001)).outcome, 'failure');
      assert.equal((await refund(1000)).outcome, 'success');
      assert.equal((await refund(2001)).outcome, 'failure');
      assert.equal((await refund(2000)).outcome, 'success');
      assert.equal((await refund(1)).outcome, 'failure');
    });

    api.it('answers a replayed refund key with the first refund and moves no more money', async () => {
      if (!harness.idempotentRefunds) {
        console.info(`[gateway contract:${harness.name}] refunds are not idempotent by key: replay case skipped`);
        return;
      }
      const charged = await under().gateway.charge(await request('succeeds', key('charge'), 3000));
      const id = charged.outcome === 'success' ? charged.transactionId : '';
      const refund = { idempotencyKey: key('refund'), chargeTransactionId: id, amountInCents: 2000, currency: 'USD' };
      const first = await under().gateway.refund(refund);
      assert.equal(first.outcome, 'success');
      assert.deepEqual(await under().gateway.refund(refund), first);
      // Had the replay refunded again, only 1000 would be left.
      assert.equal(
        (await under().gateway.refund({ ...refund, idempotencyKey: key('refund'), amountInCents: 1000 })).outcome,
        'success',
      );
    });
  });
}
