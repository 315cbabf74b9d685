/**
 * A gateway with real latency and lost answers, for runs of several concurrent workers. What
 * happens to a call is a function of the seed, the idempotency key and how many times that key
 * was called before (never of the order in which concurrent workers reach the gateway), so the
 * outcome of a run is the same on every run: a test on it cannot fail by chance.
 */
import { createHash } from 'node:crypto';
import { type ChargeResult, createTestGateway, type PaymentGateway, type TestGateway } from 'billing-engine';

/** Options of {@link createLossyGateway}. */
export interface LossyGatewayOptions {
  readonly seed: number;
  /** Real latency of each call, drawn per call between these bounds (ms). */
  readonly latencyMs: readonly [number, number];
  /** Share of the first `faultyCalls` calls of a renewal or dunning key whose answer is lost. */
  readonly lostRate: number;
  /** Share of lost answers for which the money was taken anyway. */
  readonly lostChargedRate: number;
  /** Share of the first `faultyCalls` calls of a renewal key answered `error` (takes nothing). */
  readonly errorRate: number;
  /** Share of the first lookups of a key that throw (no answer). */
  readonly lookupFailureRate: number;
  /** Calls of one key after which it always answers truthfully (so every run ends). */
  readonly faultyCalls: number;
}

/** The gateway with what it saw. */
export interface LossyGateway extends PaymentGateway {
  /** The bookkeeping gateway underneath: `charges` is every key that took money. */
  readonly inner: TestGateway;
  /** The most charge calls that were in flight at once. */
  readonly maxInFlight: number;
  /** Answers lost (with and without the money taken) and lookups that threw. */
  readonly injected: { lost: number; lostCharged: number; errors: number; lookupFailures: number };
}

/** A uniform draw in [0, 1) from the seed and the call's identity. */
function draw(seed: number, ...parts: (string | number)[]): number {
  const digest = createHash('sha256')
    .update(`${seed}|${parts.join('|')}`)
    .digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Creates a {@link LossyGateway}; faults apply to renewal and dunning keys only. */
export function createLossyGateway(options: LossyGatewayOptions): LossyGateway {
  const inner = createTestGateway();
  const charged = new Map<string, number>();
  const looked = new Map<string, number>();
  const injected = { lost: 0, lostCharged: 0, errors: 0, lookupFailures: 0 };
  let inFlight = 0;
  let maxInFlight = 0;
  const { seed, latencyMs } = options;
  const latency = (...parts: (string | number)[]) =>
    latencyMs[0] + Math.floor(draw(seed, 'latency', ...parts) * (latencyMs[1] - latencyMs[0] + 1));
  const faultable = (key: string) => key.startsWith('renewal:') || key.startsWith('dunning:');

  return {
    name: inner.name,
    supportsRefunds: inner.supportsRefunds,
    inner,
    get maxInFlight() {
      return maxInFlight;
    },
    injected,
    tokenize: (card) => inner.tokenize(card),
    refund: (request) => inner.refund(request),
    async charge(request): Promise<ChargeResult> {
      const key = request.idempotencyKey;
      const call = (charged.get(key) ?? 0) + 1;
      charged.set(key, call);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await sleep(latency('charge', key, call));
        if (!faultable(key) || call > options.faultyCalls) return await inner.charge(request);
        const roll = draw(seed, 'charge', key, call);
        if (roll < options.lostRate) {
          injected.lost += 1;
          if (draw(seed, 'taken', key, call) < options.lostChargedRate) {
            injected.lostCharged += 1;
            await inner.charge(request);
          }
          return { outcome: 'unknown', message: 'Lossy gateway: the answer was lost' };
        }
        if (key.startsWith('renewal:') && roll < options.lostRate + options.errorRate) {
          injected.errors += 1;
          return { outcome: 'error', message: 'Lossy gateway: gateway error' };
        }
        return await inner.charge(request);
      } finally {
        inFlight -= 1;
      }
    },
    async lookup(key) {
      const call = (looked.get(key) ?? 0) + 1;
      looked.set(key, call);
      await sleep(latency('lookup', key, call));
      if (
        faultable(key) &&
        call <= options.faultyCalls &&
        draw(seed, 'lookup', key, call) < options.lookupFailureRate
      ) {
        injected.lookupFailures += 1;
        throw new Error('Lossy gateway: no answer to the lookup');
      }
      return inner.lookup(key);
    },
  };
}
