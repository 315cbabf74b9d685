/**
 * The gateway-faults book over the Stripe gateway: the engine charges through `createStripeGateway`
 * and the real `stripe` client, against the fake Stripe, which injects the faults. Every fault is
 * decided by the engine's idempotency key (a hash of the seed and the key), never by call order or
 * timing, so concurrent charges meet the same faults on every run:
 *
 * - `error`: the first charge call of the key is answered 500, 503 or 429 before anything happens;
 * - `unknown` with money taken: the PaymentIntent is confirmed, then the connection is closed, for
 *   every request of the key's first charge call (the client's and the gateway's replays too), so
 *   the answer stays lost;
 * - `unknown` without money: the connection is closed before the fake does anything, as often;
 * - `lookup`: a Search for the key is answered 500 (decided by the key and the how-many-th Search);
 * - Search lag: for half the lost answers that took money, the first Search (the engine's look
 *   right after the lost answer, at the same instant) finds nothing yet, as Search lags at Stripe;
 *   the gateway must read that as "not yet", not as "never charged".
 *
 * A one-time charge's key ends in a random id (`charge:<subscription>:<uuid>`), so for those the
 * draws use the subscription, the amount and the how-many-th charge of that amount instead: the
 * merchant script's charges, made one after another, meet the same faults on every run.
 *
 * Declines are the issuer declining the PaymentIntents of chosen keys.
 */
import type { ChargeCall, GatewayFault, ManualClock, PaymentGateway } from 'billing-engine';
import { createStripeGateway } from '../../gateways/stripe/index.js';
import type { GatewayFaults } from '../../src/test-gateway.js';
import { mulberry32 } from '../../src/test-gateway.js';
import { type Interception, startFakeStripe } from '../support/fake-stripe/fake-stripe.js';
import type { FaultyGateway, FaultyGatewayKind } from './gateway-faults.suite.js';

const NAMESPACE = 'billing-engine';

/** A number in [0, 1) fixed by the seed and the text. */
function draw(seed: number, text: string): number {
  let hash = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return mulberry32(hash >>> 0)();
}

type Fate =
  | { readonly kind: 'answer' }
  | { readonly kind: 'error'; readonly status: 429 | 500 | 503 }
  | { readonly kind: 'lost'; readonly charged: boolean };

/** What the plan does to the charge under `key`, decided by the key alone. */
function fateOf(faults: GatewayFaults, key: string): Fate {
  const errorRate = faults.errorRate ?? 0;
  const unknownRate = faults.unknownRate ?? 0;
  const u = draw(faults.seed, `charge:${key}`);
  if (u < errorRate) {
    const statuses = [500, 503, 429] as const;
    return { kind: 'error', status: statuses[Math.floor(draw(faults.seed, `status:${key}`) * 3)]! };
  }
  if (u < errorRate + unknownRate)
    return { kind: 'lost', charged: draw(faults.seed, `charged:${key}`) < (faults.unknownChargedRate ?? 0.5) };
  return { kind: 'answer' };
}

/** The Stripe gateway over a fresh fake Stripe, with the faults injected by the fake. */
export const stripeGatewayKind: FaultyGatewayKind = {
  name: 'Stripe gateway over the fake Stripe',
  async create(plan: GatewayFaults | undefined, clock: ManualClock): Promise<FaultyGateway> {
    const fake = await startFakeStripe();
    const stripe = createStripeGateway({
      apiKey: 'sk_test_gatewayFaults',
      // A timeout far beyond any loopback answer: only the injected faults lose answers.
      stripeConfig: { ...fake.stripeConfig, timeout: 120_000 },
      clock,
      idempotencyNamespace: NAMESPACE,
      allowRawCardsInTestMode: true,
    });
    let active = plan;
    const injected: GatewayFault[] = [];
    const calls: ChargeCall[] = [];
    let chargeCalls = 0;
    const declines: { prefix: string; left: number }[] = [];
    const losses: { prefix: string; charged: boolean; left: number }[] = [];
    /** Per engine key: the fate decided at its first request. */
    const fates = new Map<string, Fate | 'declined'>();
    /** Per engine key: how many charge calls were made (they are sequential for one key). */
    const chargeCallsOf = new Map<string, number>();
    const searches = new Map<string, number>();
    /** Keys whose first Search found nothing though the PaymentIntent existed. */
    const lagged: string[] = [];
    const faultable = (key: string): GatewayFaults | undefined =>
      active !== undefined && (active.keyPrefixes === undefined || active.keyPrefixes.some((p) => key.startsWith(p)))
        ? active
        : undefined;
    /** What the draws of each key are made from (see above). */
    const identities = new Map<string, string>();
    const identityOf = (key: string, amountInCents: number): string => {
      const known = identities.get(key);
      if (known !== undefined) return known;
      const oneTime = /^charge:(\d+):[0-9a-f-]{36}$/.exec(key);
      let identity = key;
      if (oneTime) {
        const base = `charge:${oneTime[1]}:${amountInCents}`;
        const ordinal = [...identities.values()].filter((v) => v.startsWith(`${base}#`)).length;
        identity = `${base}#${ordinal}`;
      }
      identities.set(key, identity);
      return identity;
    };
    const engineKey = (stripeKey: string | undefined) =>
      stripeKey?.startsWith(`${NAMESPACE}:`) ? stripeKey.slice(NAMESPACE.length + 1) : undefined;

    fake.intercept((request): Interception | undefined => {
      if (request.route === 'POST /v1/payment_intents') {
        const key = engineKey(request.idempotencyKey);
        if (key === undefined) return undefined;
        let fate = fates.get(key);
        if (fate === undefined) {
          const decline = declines.find((d) => d.left > 0 && key.startsWith(d.prefix));
          if (decline) decline.left -= 1;
          const loss = decline ? undefined : losses.find((l) => l.left > 0 && key.startsWith(l.prefix));
          if (loss) loss.left -= 1;
          const faults = faultable(key);
          fate = decline
            ? 'declined'
            : loss
              ? { kind: 'lost', charged: loss.charged }
              : faults === undefined
                ? { kind: 'answer' }
                : fateOf(faults, identities.get(key) ?? key);
          fates.set(key, fate);
          if (typeof fate === 'object' && fate.kind !== 'answer')
            injected.push({
              outcome: fate.kind === 'error' ? 'error' : 'unknown',
              idempotencyKey: key,
              amountInCents: Number(request.params.amount),
              charged: fate.kind === 'lost' && fate.charged,
            });
        }
        if (fate === 'declined') return { decline: true };
        // Faults hit the key's first charge call only: a later call with the key is answered.
        if (chargeCallsOf.get(key) !== 1) return undefined;
        if (fate.kind === 'error') return { fail: fate.status };
        if (fate.kind === 'lost') return { drop: fate.charged ? 'after' : 'before' };
        return undefined;
      }
      if (request.route === 'GET /v1/payment_intents/search') {
        const query = String(request.query.query ?? '');
        const key = engineKey(/:'((?:[^'\\]|\\.)*)'$/.exec(query)?.[1]?.replace(/\\(.)/g, '$1'));
        const faults = key === undefined ? undefined : faultable(key);
        if (key === undefined || faults === undefined) return undefined;
        const n = searches.get(key) ?? 0;
        searches.set(key, n + 1);
        const fate = fates.get(key);
        const lagging =
          n === 0 &&
          typeof fate === 'object' &&
          fate.kind === 'lost' &&
          fate.charged &&
          draw(faults.seed, `lag:${identities.get(key) ?? key}`) < 0.5;
        if (lagging) {
          lagged.push(key);
          return { unindexed: true };
        }
        if (draw(faults.seed, `lookup:${identities.get(key) ?? key}:${n}`) >= (faults.lookupFailureRate ?? 0))
          return undefined;
        injected.push({ outcome: 'lookup', idempotencyKey: key, amountInCents: 0, charged: false });
        return { fail: 500 };
      }
      return undefined;
    });

    const taken = () => {
      const byKey = new Map<string, { amountInCents: number; transactionId: string }>();
      for (const intent of fake.paymentIntents.values()) {
        const key = engineKey(intent.metadata.billing_engine_key);
        if (intent.status === 'succeeded' && key !== undefined)
          byKey.set(key, { amountInCents: intent.amount_received, transactionId: intent.id });
      }
      return byKey;
    };
    const intentsOf = (key: string) =>
      [...fake.paymentIntents.values()].filter((i) => i.metadata.billing_engine_key === `${NAMESPACE}:${key}`);
    const gateway: PaymentGateway = {
      ...stripe,
      async charge(request) {
        chargeCalls += 1;
        identityOf(request.idempotencyKey, request.amountInCents);
        chargeCallsOf.set(request.idempotencyKey, (chargeCallsOf.get(request.idempotencyKey) ?? 0) + 1);
        const before = intentsOf(request.idempotencyKey).filter((i) => i.status === 'succeeded').length;
        const result = await stripe.charge(request);
        const after = intentsOf(request.idempotencyKey).filter((i) => i.status === 'succeeded').length;
        calls.push({
          idempotencyKey: request.idempotencyKey,
          amountInCents: request.amountInCents,
          outcome: result.outcome,
          tookMoney: after > before,
        });
        return result;
      },
    };

    return {
      gateway,
      // Stripe's test Visa (raw numbers reach the fake only because this is test mode).
      cardNumber: '4242424242424242',
      declineNext(prefix, times = 1) {
        declines.push({ prefix, left: times });
      },
      loseNext(prefix, charged) {
        losses.push({ prefix, charged, left: 1 });
      },
      stopFaults() {
        active = undefined;
      },
      get charges() {
        return taken();
      },
      get refunds() {
        const byIntent = new Map<string, number>();
        for (const refund of fake.refunds.values()) {
          const intent = typeof refund.payment_intent === 'string' ? refund.payment_intent : refund.payment_intent?.id;
          if (refund.status === 'succeeded' && intent !== undefined)
            byIntent.set(intent, (byIntent.get(intent) ?? 0) + refund.amount);
        }
        return byIntent;
      },
      get chargeCalls() {
        return chargeCalls;
      },
      calls,
      faults: injected,
      expectSound() {
        if (plan !== undefined && lagged.length === 0) throw new Error('no Search lagged behind a lost answer');
        if (fake.drift.length > 0) throw new Error(`the fake Stripe drifted from Stripe's shapes: ${fake.drift}`);
        // One key, one PaymentIntent (whatever became of it): a replay never made a second one.
        const perKey = new Map<string, number>();
        for (const intent of fake.paymentIntents.values()) {
          const key = intent.metadata.billing_engine_key ?? '?';
          perKey.set(key, (perKey.get(key) ?? 0) + 1);
        }
        const repeated = [...perKey].filter(([, n]) => n > 1);
        if (repeated.length > 0) throw new Error(`keys with several PaymentIntents: ${JSON.stringify(repeated)}`);
        // Every period paid by one PaymentIntent at most (a renewal or one of its dunning retries).
        const paidPeriods = new Map<string, string[]>();
        for (const [key] of taken()) {
          const period = /^(?:renewal|dunning):(\d+):(\d+)/.exec(key);
          if (period)
            paidPeriods.set(`${period[1]}:${period[2]}`, [
              ...(paidPeriods.get(`${period[1]}:${period[2]}`) ?? []),
              key,
            ]);
        }
        const twice = [...paidPeriods].filter(([, keys]) => keys.length > 1);
        if (twice.length > 0) throw new Error(`periods paid twice: ${JSON.stringify(twice)}`);
      },
      close: () => fake.close(),
    };
  },
};
