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

/** The built-in test gateway, with its recorded calls and failure injection. */
export interface TestGateway extends PaymentGateway {
  /** Makes the next matching charges fail as described. */
  injectFailure(failure: InjectedFailure): void;
  /** Every charge that took money, by idempotency key. */
  readonly charges: ReadonlyMap<string, { amountInCents: number; transactionId: string }>;
  /** How many times `charge` was called, including repeats of one key. */
  readonly chargeCalls: number;
}

/**
 * A payment gateway for tests and demos that follows the hosted service's test-gateway
 * convention: card number `1` succeeds, `2` is declined, `3` fails with a gateway error, and any
 * other Luhn-valid number succeeds. Charges are idempotent by key, and failures can be injected
 * deterministically. It never keeps a card number: tokens are derived from a hash.
 */
export function createTestGateway(options: { name?: string } = {}): TestGateway {
  const name = options.name ?? 'bogus';
  const behaviourByToken = new Map<string, 'ok' | 'decline' | 'error'>();
  const charges = new Map<string, { amountInCents: number; transactionId: string }>();
  const failures: { failure: InjectedFailure; left: number }[] = [];
  const refunded = new Map<string, number>();
  let sequence = 0;
  let chargeCalls = 0;

  const nextId = (prefix: string) => `${prefix}_${String(++sequence).padStart(6, '0')}`;

  return {
    name,
    supportsRefunds: true,
    get charges() {
      return charges;
    },
    get chargeCalls() {
      return chargeCalls;
    },
    injectFailure(failure) {
      failures.push({ failure, left: failure.times ?? 1 });
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
      const earlier = charges.get(request.idempotencyKey);
      if (earlier) return { outcome: 'success', transactionId: earlier.transactionId };
      const injected = failures.find((f) => f.left > 0 && request.idempotencyKey.startsWith(f.failure.keyPrefix ?? ''));
      if (injected) {
        injected.left -= 1;
        const { outcome, message } = injected.failure;
        if (outcome === 'unknown' && injected.failure.charged !== false) {
          charges.set(request.idempotencyKey, { amountInCents: request.amountInCents, transactionId: nextId('ch') });
        }
        return { outcome, message: message ?? defaultMessage(outcome) } as ChargeResult;
      }
      const behaviour = behaviourByToken.get(request.vaultToken) ?? 'ok';
      if (behaviour === 'decline') return { outcome: 'declined', message: 'Bogus Gateway: Forced failure' };
      if (behaviour === 'error') return { outcome: 'error', message: 'Bogus Gateway: Gateway error' };
      const transactionId = nextId('ch');
      charges.set(request.idempotencyKey, { amountInCents: request.amountInCents, transactionId });
      return { outcome: 'success', transactionId };
    },
    async refund(request: RefundRequest): Promise<RefundResult> {
      const charge = [...charges.values()].find((c) => c.transactionId === request.chargeTransactionId);
      if (!charge) return { outcome: 'failure', message: 'Bogus Gateway: unknown transaction' };
      const already = refunded.get(request.chargeTransactionId) ?? 0;
      if (already + request.amountInCents > charge.amountInCents) {
        return { outcome: 'failure', message: 'Bogus Gateway: refund exceeds the charge' };
      }
      refunded.set(request.chargeTransactionId, already + request.amountInCents);
      return { outcome: 'success', transactionId: nextId('rf') };
    },
    async lookup(idempotencyKey: string) {
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
