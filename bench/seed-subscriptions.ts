/**
 * Seeds sites, a product and due subscriptions through the storage port, in large transactions,
 * so that the benchmarks start from rows the engine itself would have written (and the raw
 * baselines from the very same rows) without paying for a signup per subscription.
 */
import { DEFAULT_SITE_SETTINGS, type PaymentGateway, type Storage } from 'billing-engine';

/** The instant every seeded renewal is due before: `runDue({ until: RENEWAL_UNTIL })` renews them all. */
export const RENEWAL_UNTIL = new Date('2026-02-01T00:00:00.000Z');

/** The price of the seeded product: every renewal charges and collects it. */
export const SEED_PRICE_IN_CENTS = 4_900;

/** The catalog and card that seeded subscriptions use. */
export interface SeededSite {
  readonly siteId: number;
  readonly subdomain: string;
  readonly productId: number;
  readonly productVersion: number;
  /** A vault token of the gateway the engine is given (the test gateway charges it successfully). */
  readonly vaultToken: string;
}

/** A seeded subscription and what its renewal will charge. */
export interface SeededSubscription {
  readonly id: number;
  readonly customerId: number;
  readonly paymentProfileId: number;
  readonly currentPeriodEndsAt: Date;
}

/**
 * Inserts a site (default settings, UTC, USD), a family and a monthly product, and tokenizes a
 * test card on `gateway`, which must be the gateway instance the engine will charge through.
 */
export async function seedSite(storage: Storage, gateway: PaymentGateway, subdomain: string): Promise<SeededSite> {
  const card = await gateway.tokenize({ fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 });
  if (!card.ok) throw new Error(`The gateway refused the bench card: ${card.message}`);
  const at = new Date('2025-11-01T00:00:00.000Z');
  return storage.transaction(async (tx) => {
    const site = await tx.sites.insert({
      subdomain,
      name: `Bench ${subdomain}`,
      currency: 'USD',
      timeZone: 'UTC',
      dateFormat: 'YYYY-MM-DD',
      timeFormat: 'HH:mm:ss',
      mode: 'test',
      sharedKey: 'bench-shared-key',
      settings: DEFAULT_SITE_SETTINGS,
      createdAt: at,
      updatedAt: at,
    });
    const family = await tx.catalog.insertFamily({
      siteId: site.id,
      name: 'Bench plans',
      handle: 'bench-plans',
      description: null,
      createdAt: at,
      updatedAt: at,
    });
    const { product, version } = await tx.catalog.insertProduct(
      { siteId: site.id, familyId: family.id, handle: 'bench-monthly', archivedAt: null, createdAt: at, updatedAt: at },
      {
        name: 'Bench monthly',
        description: null,
        accountingCode: null,
        priceInCents: SEED_PRICE_IN_CENTS,
        interval: 1,
        intervalUnit: 'month',
        trialPriceInCents: null,
        trialInterval: null,
        trialIntervalUnit: null,
        initialChargeInCents: null,
        initialChargeAfterTrial: false,
        expirationInterval: null,
        expirationIntervalUnit: null,
        requestCreditCard: true,
        requireCreditCard: true,
        taxable: false,
      },
    );
    return {
      siteId: site.id,
      subdomain,
      productId: product.id,
      productVersion: version.version,
      vaultToken: card.vaultToken,
    };
  });
}

/** Options of {@link seedDueSubscriptions}. */
export interface SeedSubscriptionsOptions {
  readonly count: number;
  /** Also schedule each one's renewal as due work (the engine's key format); false for the storage-unit section. */
  readonly withRenewalWork: boolean;
  /** Subscriptions per transaction. */
  readonly chunk?: number;
  /** Offset of the first subscription's number, so several calls on one site get distinct references. */
  readonly first?: number;
}

/**
 * Inserts `count` active monthly subscriptions, each with its own customer, payment profile and
 * signup MRR movement, whose first period ends within the day before {@link RENEWAL_UNTIL}. Their next period then
 * ends a month later, and that period's notice (three days ahead) is still after `RENEWAL_UNTIL`,
 * so `runDue({ until: RENEWAL_UNTIL })` does exactly one renewal per subscription and nothing else.
 * The renewal row is what `scheduleRenewalAt` would write: key `renewal:<id>:<next>@<dueMs>/v<version>`,
 * payload `{ periodIndex: next }`.
 */
export async function seedDueSubscriptions(
  storage: Storage,
  site: SeededSite,
  options: SeedSubscriptionsOptions,
): Promise<SeededSubscription[]> {
  const chunk = Math.max(1, options.chunk ?? 2_000);
  const first = options.first ?? 0;
  const out: SeededSubscription[] = [];
  for (let start = 0; start < options.count; start += chunk) {
    const end = Math.min(options.count, start + chunk);
    const batch = await storage.transaction(async (tx) => {
      const seeded: SeededSubscription[] = [];
      for (let i = first + start; i < first + end; i++) {
        // Spread over the 23 hours before `until`, a minute apart, so due order is not id order.
        const periodEnd = new Date(RENEWAL_UNTIL.getTime() - 60_000 * (1 + ((i * 7919) % 1380)));
        const anchor = new Date(periodEnd);
        anchor.setUTCMonth(anchor.getUTCMonth() - 1);
        const customer = await tx.customers.insert({
          siteId: site.siteId,
          firstName: 'Bench',
          lastName: `Customer ${i}`,
          email: `bench${i}@example.com`,
          reference: `bench-${i}`,
          organization: null,
          phone: null,
          address: { address: null, address2: null, city: null, state: null, zip: null, country: null },
          createdAt: anchor,
          updatedAt: anchor,
        });
        const profile = await tx.customers.insertPaymentProfile({
          siteId: site.siteId,
          customerId: customer.id,
          paymentType: 'credit_card',
          vaultToken: site.vaultToken,
          customerVaultToken: null,
          currentVault: 'bogus',
          cardType: 'visa',
          lastFour: '1111',
          expirationMonth: 12,
          expirationYear: 2030,
          firstName: 'Bench',
          lastName: `Customer ${i}`,
          billingAddress: { address: null, address2: null, city: null, state: null, zip: null, country: null },
          createdAt: anchor,
          updatedAt: anchor,
        });
        const subscription = await tx.subscriptions.insert({
          siteId: site.siteId,
          customerId: customer.id,
          productId: site.productId,
          productVersion: site.productVersion,
          paymentProfileId: profile.id,
          state: 'active',
          periodAnchorAt: anchor,
          periodIndex: 0,
          currentPeriodStartedAt: anchor,
          currentPeriodEndsAt: periodEnd,
          nextAssessmentAt: periodEnd,
          trialStartedAt: null,
          trialEndedAt: null,
          activatedAt: anchor,
          canceledAt: null,
          expiresAt: null,
          delayedCancelAt: null,
          cancelAtEndOfPeriod: false,
          cancellationMessage: null,
          cancellationMethod: null,
          signupPaymentId: null,
          signupRevenueInCents: SEED_PRICE_IN_CENTS,
          couponCodes: [],
          referralCode: null,
          data: {},
          createdAt: anchor,
          updatedAt: anchor,
        });
        // The movement its signup would have recorded, so that a renewal finds the history as it
        // is for any subscription signed up by the engine (and writes no baseline).
        await tx.mrrMovements.insert({
          siteId: site.siteId,
          subscriptionId: subscription.id,
          occurredAt: anchor,
          category: 'new_business',
          amountInCents: SEED_PRICE_IN_CENTS,
          planAmountInCents: SEED_PRICE_IN_CENTS,
          usageAmountInCents: 0,
          mrrInCents: SEED_PRICE_IN_CENTS,
          planMrrInCents: SEED_PRICE_IN_CENTS,
          usageMrrInCents: 0,
          subscriberName: `Bench Customer ${i}`,
          lineItems: [
            {
              productId: site.productId,
              componentId: 0,
              pricePointId: null,
              name: 'Bench monthly',
              mrrInCents: SEED_PRICE_IN_CENTS,
              movementInCents: SEED_PRICE_IN_CENTS,
              quantity: 1,
              prevQuantity: 0,
              recurring: true,
            },
          ],
        });
        if (options.withRenewalWork) {
          const next = subscription.periodIndex + 1;
          await tx.dueWork.schedule({
            siteId: site.siteId,
            kind: 'renewal',
            subjectId: subscription.id,
            dueAt: periodEnd,
            uniqueKey: `renewal:${subscription.id}:${next}@${periodEnd.getTime()}/v${subscription.version}`,
            payload: { periodIndex: next },
          });
        }
        seeded.push({
          id: subscription.id,
          customerId: customer.id,
          paymentProfileId: profile.id,
          currentPeriodEndsAt: periodEnd,
        });
      }
      return seeded;
    });
    out.push(...batch);
  }
  return out;
}
