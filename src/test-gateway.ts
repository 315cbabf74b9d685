import { createHash } from 'node:crypto';
import type {
  CardInput,
  ChargeRequest,
  ChargeResult,
  PaymentGateway,
  RefundRequest,
  RefundResult,
  TokenizeResult,
} from './ports/gateway.js';

/** A deterministic failure to inject for the next matching charges. */
export interface InjectedFailure {
  readonly outcome: 'declined' | 'error' | 'unknown';
  readonly message?: string;
  /** How many charges it applies to (default 1). */
  readonly times?: number;
  /** Only charges whose idempotency key starts with this. */
  readonly keyPrefix?: string;
  /** For `unknown`: whether the gateway really took the money before the answer was lost (default true). */
  readonly charged?: boolean;
}

/**
 * Seeded fractional faults: a share of charge calls fails, the same calls for the same seed. Draws
 * come from a small seeded PRNG (never `Math.random`), one per charge call it applies to, in call
 * order, so a deterministic caller sees the same faults on every run.
 */
export interface GatewayFaults {
  /** Seed of the PRNG (any safe integer); the same seed and the same calls give the same faults. */
  readonly seed: number;
  /** Share of charge calls (0 to 1) answered `error`: the gateway refused and took nothing. */
  readonly errorRate?: number;
  /** Share of charge calls (0 to 1) answered `unknown`: the answer was lost. */
  readonly unknownRate?: number;
  /**
   * Share of `unknown` answers (0 to 1) for which the gateway had in fact taken the money (default
   * 0.5). `lookup` answers truthfully either way.
   */
  readonly unknownChargedRate?: number;
  /**
   * Share of `lookup` calls (0 to 1) that throw as if the gateway did not answer (default 0), so
   * the caller cannot learn the outcome yet and must ask again later.
   */
  readonly lookupFailureRate?: number;
  /** Only charges (and lookups) whose idempotency key starts with one of these; default all. */
  readonly keyPrefixes?: readonly string[];
}

/** One fault the gateway injected under {@link GatewayFaults}. */
export interface GatewayFault {
  /** `error` and `unknown` answer a charge; `lookup` is a lookup that threw. */
  readonly outcome: 'error' | 'unknown' | 'lookup';
  readonly idempotencyKey: string;
  readonly amountInCents: number;
  /** For `unknown`: whether the money was taken before the answer was lost. */
  readonly charged: boolean;
}

/** One call of `charge`, as the gateway answered it. */
export interface ChargeCall {
  readonly idempotencyKey: string;
  readonly amountInCents: number;
  readonly outcome: ChargeResult['outcome'];
  /** Whether this call took money (a repeat of a charged key answers success without taking more). */
  readonly tookMoney: boolean;
}

/** The built-in test gateway, with its recorded calls and failure injection. */
export interface TestGateway extends PaymentGateway {
  /** Makes the next matching charges fail as described. */
  injectFailure(failure: InjectedFailure): void;
  /** Starts seeded fractional faults (replacing any before, with a fresh PRNG), or stops them with `undefined`. */
  setFaults(faults: GatewayFaults | undefined): void;
  /** Every charge that took money, by idempotency key. */
  readonly charges: ReadonlyMap<string, { amountInCents: number; transactionId: string }>;
  /** How much of each charge was refunded, by the charge's transaction id. */
  readonly refunds: ReadonlyMap<string, number>;
  /** How many times `charge` was called, including repeats of one key. */
  readonly chargeCalls: number;
  /** Every `charge` call in order, with its answer, when created with `faults` or `recordCalls`; else empty. */
  readonly calls: readonly ChargeCall[];
  /** Every fault injected by {@link GatewayFaults}, in order. */
  readonly faults: readonly GatewayFault[];
}

/** A fault plan checked and bound to its PRNG. */
interface ActiveFaults {
  readonly errorRate: number;
  readonly unknownRate: number;
  readonly unknownChargedRate: number;
  readonly lookupFailureRate: number;
  readonly keyPrefixes: readonly string[] | undefined;
  readonly next: () => number;
}

/** A share between 0 and 1, or the fallback when absent. */
function share(value: number | undefined, fallback: number, label: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1))
    throw new RangeError(`${label} must be between 0 and 1.`);
  return value;
}

function activeFaults(faults: GatewayFaults): ActiveFaults {
  if (!Number.isSafeInteger(faults.seed)) throw new RangeError('Gateway faults: seed must be a safe integer.');
  const errorRate = share(faults.errorRate, 0, 'Gateway faults: errorRate');
  const unknownRate = share(faults.unknownRate, 0, 'Gateway faults: unknownRate');
  if (errorRate + unknownRate > 1) throw new RangeError('Gateway faults: errorRate + unknownRate must be at most 1.');
  return {
    errorRate,
    unknownRate,
    unknownChargedRate: share(faults.unknownChargedRate, 0.5, 'Gateway faults: unknownChargedRate'),
    lookupFailureRate: share(faults.lookupFailureRate, 0, 'Gateway faults: lookupFailureRate'),
    keyPrefixes: faults.keyPrefixes === undefined ? undefined : [...faults.keyPrefixes],
    next: mulberry32(faults.seed),
  };
}

/**
 * mulberry32: a tiny 32-bit PRNG with a full 2^32 period, plenty for choosing which test calls
 * fail. Returns uniform numbers in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Options of {@link createTestGateway}. */
export interface TestGatewayOptions {
  /** The name shown as `current_vault` and `gateway_used`; default `bogus`. */
  readonly name?: string;
  /** Seeded fractional faults from the start (see {@link GatewayFaults}); none by default. */
  readonly faults?: GatewayFaults;
  /** Keep every charge call in `calls`; default only when created with `faults` (long runs stay lean). */
  readonly recordCalls?: boolean;
}

/**
 * A payment gateway for tests and demos that follows the hosted service's test-gateway
 * convention: card number `1` succeeds, `2` is declined, `3` fails with a gateway error, and any
 * other Luhn-valid number succeeds. Charges are idempotent by key, and failures can be injected
 * deterministically: `injectFailure` for the next matching charges, or `faults` (at creation or
 * through `setFaults`) for a seeded fraction of all calls. A fault `error` takes nothing; a fault
 * `unknown` loses the answer and may or may not have taken the money; `lookup` always tells the
 * truth when it answers. The order is: a key that already took money answers success, then an
 * injected failure, then the card's own behaviour (`2` declines, `3` errors), then the faults.
 * Without `faults` it behaves exactly as before. It never keeps a card number: tokens are derived
 * from a hash.
 */
export function createTestGateway(options: TestGatewayOptions = {}): TestGateway {
  const name = options.name ?? 'bogus';
  const behaviourByToken = new Map<string, 'ok' | 'decline' | 'error'>();
  const charges = new Map<string, { amountInCents: number; transactionId: string }>();
  const failures: { failure: InjectedFailure; left: number }[] = [];
  const refunded = new Map<string, number>();
  let sequence = 0;
  let chargeCalls = 0;
  const calls: ChargeCall[] = [];
  const recordCalls = options.recordCalls ?? options.faults !== undefined;
  const injected: GatewayFault[] = [];
  let faults = options.faults === undefined ? undefined : activeFaults(options.faults);
  const faultable = (key: string) =>
    faults !== undefined && (faults.keyPrefixes === undefined || faults.keyPrefixes.some((p) => key.startsWith(p)));

  const nextId = (prefix: string) => `${prefix}_${String(++sequence).padStart(6, '0')}`;

  const refundsByKey = new Map<string, RefundResult>();
  const refundOnce = async (request: RefundRequest): Promise<RefundResult> => {
    const charge = [...charges.values()].find((c) => c.transactionId === request.chargeTransactionId);
    if (!charge) return { outcome: 'failure', message: 'Bogus Gateway: unknown transaction' };
    const already = refunded.get(request.chargeTransactionId) ?? 0;
    if (already + request.amountInCents > charge.amountInCents) {
      return { outcome: 'failure', message: 'Bogus Gateway: refund exceeds the charge' };
    }
    refunded.set(request.chargeTransactionId, already + request.amountInCents);
    return { outcome: 'success', transactionId: nextId('rf') };
  };

  return {
    name,
    supportsRefunds: true,
    get charges() {
      return charges;
    },
    get chargeCalls() {
      return chargeCalls;
    },
    get refunds() {
      return refunded;
    },
    get calls() {
      return calls;
    },
    get faults() {
      return injected;
    },
    injectFailure(failure) {
      failures.push({ failure, left: failure.times ?? 1 });
    },
    setFaults(next) {
      faults = next === undefined ? undefined : activeFaults(next);
    },
    async tokenize(card: CardInput): Promise<TokenizeResult> {
      const digits = card.fullNumber.replace(/[\s-]/g, '');
      let behaviour: 'ok' | 'decline' | 'error';
      if (digits === '1') behaviour = 'ok';
      else if (digits === '2') behaviour = 'decline';
      else if (digits === '3') behaviour = 'error';
      else if (/^\d{12,19}$/.test(digits) && luhnValid(digits)) behaviour = 'ok';
      else return { ok: false, message: 'Credit card number: is invalid.' };
      const vaultToken = `tok_${createHash('sha256').update(`${digits}:${sequence++}`).digest('hex').slice(0, 24)}`;
      behaviourByToken.set(vaultToken, behaviour);
      return {
        ok: true,
        vaultToken,
        customerVaultToken: null,
        cardType: cardTypeOf(digits),
        lastFour: digits.slice(-4),
      };
    },
    async charge(request: ChargeRequest): Promise<ChargeResult> {
      chargeCalls += 1;
      const key = request.idempotencyKey;
      const answer = (result: ChargeResult, tookMoney = false): ChargeResult => {
        if (recordCalls) {
          calls.push({ idempotencyKey: key, amountInCents: request.amountInCents, outcome: result.outcome, tookMoney });
        }
        return result;
      };
      const take = () => {
        const transactionId = nextId('ch');
        charges.set(key, { amountInCents: request.amountInCents, transactionId });
        return transactionId;
      };
      const earlier = charges.get(key);
      if (earlier) return answer({ outcome: 'success', transactionId: earlier.transactionId });
      const failure = failures.find((f) => f.left > 0 && key.startsWith(f.failure.keyPrefix ?? ''));
      if (failure) {
        failure.left -= 1;
        const { outcome, message } = failure.failure;
        const charged = outcome === 'unknown' && failure.failure.charged !== false;
        if (charged) take();
        return answer({ outcome, message: message ?? defaultMessage(outcome) } as ChargeResult, charged);
      }
      const behaviour = behaviourByToken.get(request.vaultToken) ?? 'ok';
      if (behaviour === 'decline') return answer({ outcome: 'declined', message: 'Bogus Gateway: Forced failure' });
      if (behaviour === 'error') return answer({ outcome: 'error', message: 'Bogus Gateway: Gateway error' });
      if (faults !== undefined && faultable(key)) {
        const draw = faults.next();
        const outcome =
          draw < faults.errorRate ? 'error' : draw < faults.errorRate + faults.unknownRate ? 'unknown' : undefined;
        if (outcome !== undefined) {
          const charged = outcome === 'unknown' && faults.next() < faults.unknownChargedRate;
          if (charged) take();
          injected.push({ outcome, idempotencyKey: key, amountInCents: request.amountInCents, charged });
          return answer({ outcome, message: defaultMessage(outcome) }, charged);
        }
      }
      return answer({ outcome: 'success', transactionId: take() }, true);
    },
    async refund(request: RefundRequest): Promise<RefundResult> {
      // Idempotent by key, as a real gateway is: a replayed refund gets the first answer and moves no more money.
      const replay = refundsByKey.get(request.idempotencyKey);
      if (replay) return replay;
      const result = await refundOnce(request);
      if (result.outcome === 'success') refundsByKey.set(request.idempotencyKey, result);
      return result;
    },
    async lookup(idempotencyKey: string) {
      if (faults !== undefined && faults.lookupFailureRate > 0 && faultable(idempotencyKey)) {
        if (faults.next() < faults.lookupFailureRate) {
          injected.push({ outcome: 'lookup', idempotencyKey, amountInCents: 0, charged: false });
          throw new Error('Bogus Gateway: no response to the lookup');
        }
      }
      const charge = charges.get(idempotencyKey);
      return charge ? { outcome: 'success', transactionId: charge.transactionId } : undefined;
    },
  };
}

function defaultMessage(outcome: InjectedFailure['outcome']): string {
  if (outcome === 'declined') return 'Bogus Gateway: Forced failure';
  if (outcome === 'error') return 'Bogus Gateway: Gateway error';
  return 'Bogus Gateway: no response';
}

/** True when the digits pass the Luhn check. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The service's card type name for a number. */
export function cardTypeOf(digits: string): string {
  if (digits.length <= 2) return 'bogus';
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(digits)) return 'master';
  if (/^3[47]/.test(digits)) return 'american_express';
  if (/^(6011|65|64[4-9])/.test(digits)) return 'discover';
  if (/^35/.test(digits)) return 'jcb';
  if (/^3(0[0-5]|[68])/.test(digits)) return 'diners_club';
  return 'bogus';
}
