import type {
  BillingEngine,
  BillingEvent,
  Clock,
  PaymentGateway,
  RefundRequest,
  RefundResult,
  Storage,
  TestGateway,
  TransactionRecord,
} from 'billing-engine';
import { LedgerService } from '../../src/services/ledger-service.js';
import { NoteService } from '../../src/services/note-service.js';
import { ReferralService } from '../../src/services/referral-service.js';
import type { SubscriptionDeps } from '../../src/services/subscription-service.js';

/** A card the test gateway accepts. */
export const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/**
 * A gateway that delegates to the test gateway but whose refunds (and, when asked, lookups) can be
 * made to fail or throw, and whose refund support can be switched off: the test gateway itself
 * has no refund failure injection.
 */
export interface ControlledGateway extends PaymentGateway {
  supportsRefunds: boolean;
  /** Answers of the next refund calls, consumed in order; `throw` simulates a lost answer. */
  readonly refundPlan: ('fail' | 'throw' | 'throw-after')[];
  /** How many lookups throw before lookups answer again. */
  failingLookups: number;
  /** Every refund request that reached the real test gateway and succeeded. */
  readonly refunds: RefundRequest[];
}

/** Wraps a test gateway in a {@link ControlledGateway}. */
export function controlledGateway(base: TestGateway): ControlledGateway {
  const gateway: ControlledGateway = {
    name: base.name,
    supportsRefunds: true,
    refundPlan: [],
    failingLookups: 0,
    refunds: [],
    tokenize: (card) => base.tokenize(card),
    charge: (request) => base.charge(request),
    async lookup(key) {
      if (gateway.failingLookups > 0) {
        gateway.failingLookups -= 1;
        throw new Error('lookup timed out');
      }
      return base.lookup(key);
    },
    async refund(request): Promise<RefundResult> {
      const next = gateway.refundPlan.shift();
      if (next === 'fail') return { outcome: 'failure', message: 'Bogus Gateway: refund declined' };
      if (next === 'throw') throw new Error('refund timed out');
      const result = await base.refund(request);
      if (result.outcome === 'success') gateway.refunds.push(request);
      if (next === 'throw-after') throw new Error('refund answer lost');
      return result;
    },
  };
  return gateway;
}

/** The services under test over one engine's storage and clock, with a recording emitter. */
export interface LedgerHarness {
  readonly ledger: LedgerService;
  readonly notes: NoteService;
  readonly referrals: ReferralService;
  readonly gateway: ControlledGateway;
  readonly events: BillingEvent[];
}

/** Builds the services of this issue the way the engine will: one deps object, a recording emitter. */
export function ledgerServices(storage: Storage, clock: Clock, base: TestGateway): LedgerHarness {
  const events: BillingEvent[] = [];
  const gateway = controlledGateway(base);
  const deps: SubscriptionDeps = { storage, clock, gateway, emitter: { emit: (_key, event) => events.push(event) } };
  return {
    ledger: new LedgerService(deps),
    notes: new NoteService(deps),
    referrals: new ReferralService(deps),
    gateway,
    events,
  };
}

/** Creates site `subdomain` (USD, New York) with a 10.00 monthly product `basic` and a free product `free`. */
export async function seedSite(engine: BillingEngine, subdomain = 'acme'): Promise<{ siteId: number }> {
  const created = await engine.sites.create({ subdomain, currency: 'USD', timeZone: 'America/New_York' });
  const site = engine.site(subdomain);
  const family = await site.catalog.createFamily({ name: 'Plans' });
  await site.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  await site.catalog.createProduct(family.id, {
    name: 'Free',
    handle: 'free',
    priceInCents: 0,
    interval: 1,
    intervalUnit: 'month',
  });
  return { siteId: created.site.id };
}

/** Signs up a paying subscription (balance 0 after a 1000 charge and its payment); returns its id and signup payment id. */
export async function paidSubscription(
  engine: BillingEngine,
  subdomain = 'acme',
  email = 'ada@example.com',
): Promise<{ id: number; paymentId: number }> {
  const view = await engine.site(subdomain).subscriptions.create({
    productHandle: 'basic',
    customer: { firstName: 'Ada', lastName: 'Lovelace', email },
    creditCard: VISA,
  });
  return { id: view.subscription.id, paymentId: view.subscription.signupPaymentId! };
}

/** The signed effect of a line on the balance, as the test computes it independently of the domain helper. */
export function signedEffect(line: TransactionRecord): number {
  if (line.type === 'charge' || line.type === 'adjustment' || line.type === 'credit') return line.amountInCents;
  if (line.type === 'payment') return -line.amountInCents;
  return 0;
}
