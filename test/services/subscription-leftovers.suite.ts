import { createBillingEngine, type IssuedDirectCredentials } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { DirectPostService, formParamsFromJson } from '../../src/services/direct-post-service.js';
import { SubscriptionService } from '../../src/services/subscription-service.js';
import { capturingMailer } from '../support/capturing-mailer.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/**
 * `acme` (USD, test mode) with family Plans: `basic` (10.00 a month) and `pro` (25.00 a month), a
 * coupon TEN (10%) and an offer `pro-deal` (Pro with TEN); `globex` to show nothing crosses sites.
 */
async function setup(f: EngineFixture) {
  const created = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC', mode: 'test' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'USD', timeZone: 'UTC', mode: 'test' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const basic = await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  const pro = await acme.catalog.createProduct(family.id, {
    name: 'Pro',
    handle: 'pro',
    priceInCents: 2500,
    interval: 1,
    intervalUnit: 'month',
  });
  await acme.coupons.create({ name: 'Ten', code: 'TEN', percentage: '10', productFamilyId: family.id });
  const offer = await acme.offers.create({
    name: 'Pro deal',
    handle: 'pro-deal',
    productId: pro.product.id,
    coupons: ['TEN'],
  });
  let n = 0;
  const customer = () => ({ firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` });
  const subscribe = (input: Record<string, unknown>) =>
    acme.subscriptions.create({ customer: customer(), creditCard: VISA, ...input });
  return {
    acme,
    siteId: created.site.id,
    direct: created.direct as IssuedDirectCredentials,
    basic: basic.product.id,
    pro: pro.product.id,
    offer: offer.offer.id,
    subscribe,
  };
}

/** Months forward, running due work after each. */
async function months(f: EngineFixture, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const next = new Date(f.clock.now());
    next.setUTCMonth(next.getUTCMonth() + 1);
    f.clock.set(next);
    await f.engine.runDue();
  }
}

/** Subscription fields left undone in #19: `offer_id`, the prepayment balance, and what purge removes. */
export function subscriptionLeftoversSuite(harness: StorageHarness): void {
  describe(`subscription leftovers (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-01-15T12:00:00Z');

    describe('the offer a subscription came from', () => {
      it('is recorded with a signup naming it by id or by handle, and read back by every read', async () => {
        const f = fixture();
        const s = await setup(f);
        const byId = await s.subscribe({ offerId: s.offer, reference: 'by-id' });
        const byHandle = await s.subscribe({ offerId: 'handle:pro-deal' });
        const plain = await s.subscribe({ productHandle: 'pro', couponCode: 'TEN' });
        for (const view of [byId, byHandle]) {
          expect(view.subscription.data.offerId).toBe(s.offer);
          expect(view.subscription.productId).toBe(s.pro);
        }
        expect('offerId' in plain.subscription.data).toBe(false);
        // Billed as the explicit signup is.
        expect(byId.subscription.signupRevenueInCents).toBe(plain.subscription.signupRevenueInCents);
        expect((await s.acme.subscriptions.get(byId.subscription.id)).subscription.data.offerId).toBe(s.offer);
        expect((await s.acme.subscriptions.lookup('by-id')).subscription.data.offerId).toBe(s.offer);
        const listed = await s.acme.subscriptions.list({ direction: 'asc' });
        expect(listed.map((v) => v.subscription.data.offerId ?? null)).toEqual([s.offer, s.offer, null]);
      });

      it('stays through a migration and a renewal, and an archived offer leaves it on its subscribers', async () => {
        const f = fixture();
        const s = await setup(f);
        const view = await s.subscribe({ offerId: s.offer });
        await s.acme.offers.archive(s.offer);
        const migrated = await s.acme.subscriptions.migrate(view.subscription.id, { productHandle: 'basic' });
        await months(f, 1);
        const after = await s.acme.subscriptions.get(view.subscription.id);
        expect(after.subscription.productId).toBe(s.basic);
        expect(after.subscription.periodIndex).toBe(migrated.subscription.periodIndex + 1);
        expect(after.subscription.data.offerId).toBe(s.offer);
      });

      it('is not recorded by a refused signup, and a signup preview shows it without writing it', async () => {
        const f = fixture();
        const s = await setup(f);
        const refused = await rejection(s.subscribe({ offerId: s.offer, productHandle: 'basic' }));
        expect(refused.code).toBe('validation');
        expect(await s.acme.subscriptions.list()).toEqual([]);
        const preview = await s.acme.subscriptions.previewSignup({
          offerId: 'handle:pro-deal',
          customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          creditCard: VISA,
        });
        expect(preview.currentBillingManifest.totalInCents).toBe(2250);
        expect(await s.acme.subscriptions.list()).toEqual([]);
      });

      it('is recorded by a direct post signup naming it, and shown in its answer', async () => {
        const f = fixture();
        const s = await setup(f);
        const deps = { storage: f.storage, clock: f.clock, gateway: f.gateway, emitter: { emit() {} } };
        const direct = new DirectPostService(deps, new SubscriptionService(deps));
        const params = formParamsFromJson({
          signup: {
            offer_id: 'handle:pro-deal',
            customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
            payment_profile: { card_number: '1', expiration_month: 12, expiration_year: 2030 },
          },
        });
        const result = await direct.signup(
          { params },
          { contentType: 'json', basic: { apiId: s.direct.apiId, password: s.direct.apiPassword } },
        );
        expect(result.resultCode).toBe('2000');
        const body = result.call.response as {
          signup: { subscription: { id: number; offer_id: number | null; prepayment_balance_in_cents: number } };
        };
        expect(body.signup.subscription.offer_id).toBe(s.offer);
        expect(body.signup.subscription.prepayment_balance_in_cents).toBe(0);
        const stored = await s.acme.subscriptions.get(body.signup.subscription.id);
        expect(stored.subscription.data.offerId).toBe(s.offer);
      });
    });

    describe('the prepayment balance on subscription reads', () => {
      it("is a prepaid subscription's prepayment balance as the account balances show it, falling as it pays", async () => {
        const f = fixture();
        const s = await setup(f);
        const created = await s.subscribe({
          productHandle: 'basic',
          paymentCollectionMethod: 'prepaid',
          prepaidConfiguration: { initialFundingAmountInCents: 5000 },
          reference: 'prepaid',
        });
        const id = created.subscription.id;
        // 50.00 funded, 10.00 of it paid the first period.
        expect(created.prepaymentBalanceInCents).toBe(4000);
        expect((await s.acme.subscriptions.get(id)).prepaymentBalanceInCents).toBe(4000);
        expect((await s.acme.accounts.balances(id)).prepaymentsInCents).toBe(4000);
        await months(f, 2);
        const read = await s.acme.subscriptions.get(id);
        expect(read.prepaymentBalanceInCents).toBe(2000);
        expect((await s.acme.accounts.balances(id)).prepaymentsInCents).toBe(2000);
        expect((await s.acme.subscriptions.lookup('prepaid')).prepaymentBalanceInCents).toBe(2000);
        expect((await s.acme.subscriptions.list()).map((v) => v.prepaymentBalanceInCents)).toEqual([2000]);
        // A service credit is credit of another account: the prepayment balance is unchanged.
        await s.acme.accounts.issueServiceCredit(id, { amount: '3', memo: 'Outage' });
        expect((await s.acme.subscriptions.get(id)).prepaymentBalanceInCents).toBe(2000);
        // A refund of what remains of a prepayment takes it off.
        const [prepayment] = await s.acme.accounts.listPrepayments(id);
        await s.acme.accounts.refundPrepayment(id, prepayment!.entry.id, {
          amountInCents: 500,
          memo: 'Back',
          external: true,
        });
        expect((await s.acme.subscriptions.get(id)).prepaymentBalanceInCents).toBe(1500);
        expect((await s.acme.accounts.balances(id)).prepaymentsInCents).toBe(1500);
      });

      it('is 0 without prepayments, and an automatic subscription shows an external prepayment it holds', async () => {
        const f = fixture();
        const s = await setup(f);
        const view = await s.subscribe({ productHandle: 'basic' });
        const id = view.subscription.id;
        expect(view.prepaymentBalanceInCents).toBe(0);
        await s.acme.accounts.issueServiceCredit(id, { amount: '4', memo: 'Goodwill' });
        expect((await s.acme.subscriptions.get(id)).prepaymentBalanceInCents).toBe(0);
        await s.acme.accounts.createPrepayment(id, {
          amountInCents: 2500,
          memo: 'Wire',
          details: 'REF',
          method: 'ach',
        });
        expect((await s.acme.subscriptions.get(id)).prepaymentBalanceInCents).toBe(2500);
        // The renewal takes the service credit first (4.00), then 6.00 of the prepayment.
        await months(f, 1);
        expect((await s.acme.subscriptions.get(id)).prepaymentBalanceInCents).toBe(1900);
        expect((await s.acme.accounts.balances(id)).prepaymentsInCents).toBe(1900);
      });
    });

    describe('purge', () => {
      it("removes the subscription's custom price points and their terms, and no other subscription's", async () => {
        const f = fixture();
        const s = await setup(f);
        const own = await s.subscribe({
          productHandle: 'basic',
          customPrice: { handle: 'mine', priceInCents: 700, interval: 1, intervalUnit: 'month' },
        });
        const other = await s.subscribe({
          productHandle: 'basic',
          customPrice: { handle: 'theirs', priceInCents: 800, interval: 1, intervalUnit: 'month' },
        });
        const id = own.subscription.id;
        // A migration onto a second custom price point of its own.
        const moved = await s.acme.subscriptions.migrate(id, {
          customPrice: { priceInCents: 900, interval: 1, intervalUnit: 'month' },
        });
        const mine = [own.product.pricePoint!, moved.product.pricePoint!];
        expect(mine.map((p) => [p.type, p.subscriptionId])).toEqual([
          ['custom', id],
          ['custom', id],
        ]);
        const versions = [own.subscription.productVersion, moved.subscription.productVersion];
        const result = await s.acme.subscriptions.purge(id, { ack: own.customer.id });
        expect(result.removed.customPricePoints).toBe(2);

        for (const pricePoint of mine)
          expect((await rejection(s.acme.pricePoints.getProductPricePoint('basic', pricePoint.id))).code).toBe(
            'not_found',
          );
        const custom = await s.acme.pricePoints.listProductPricePoints('basic', { types: ['custom'] });
        expect(custom.map((v) => v.pricePoint.handle)).toEqual(['theirs']);
        await f.storage.transaction(async (tx) => {
          for (const version of versions)
            expect(await tx.catalog.findProductVersion(s.siteId, s.basic, version)).toBeUndefined();
          expect(
            await tx.catalog.findProductVersion(s.siteId, s.basic, other.subscription.productVersion),
          ).toBeDefined();
        });
        // The other subscriber still renews at its own price.
        await months(f, 1);
        const renewed = await s.acme.subscriptions.get(other.subscription.id);
        expect([renewed.subscription.periodIndex, renewed.product.version.terms.priceInCents]).toEqual([1, 800]);
        // The handle is free again, and a new custom price point has terms of its own.
        const again = await s.subscribe({
          productHandle: 'basic',
          customPrice: { handle: 'mine', priceInCents: 600, interval: 1, intervalUnit: 'month' },
        });
        expect(again.product.version.terms.priceInCents).toBe(600);
        expect((await s.acme.subscriptions.get(again.subscription.id)).product.version.terms.priceInCents).toBe(600);
      });

      it("leaves a subscription's custom price point in place when the purge is refused", async () => {
        const f = fixture();
        const s = await setup(f);
        const own = await s.subscribe({
          productHandle: 'basic',
          customPrice: { handle: 'mine', priceInCents: 700, interval: 1, intervalUnit: 'month' },
        });
        const refused = await rejection(s.acme.subscriptions.purge(own.subscription.id, { ack: own.customer.id + 1 }));
        expect(refused.code).toBe('validation');
        expect((await s.acme.pricePoints.getProductPricePoint('basic', 'mine')).pricePoint.subscriptionId).toBe(
          own.subscription.id,
        );
      });

      it('removes its prepaid replenishment checks and the mail jobs about it, its invoices and its customer', async () => {
        const f = fixture();
        const s = await setup(f);
        const capture = capturingMailer();
        // The same storage and clock with a mailer, to queue and send mail.
        const mailing = createBillingEngine({
          storage: f.storage,
          clock: f.clock,
          gateway: f.gateway,
          mail: { mailer: capture.mailer, siteOrigin: (subdomain) => `https://${subdomain}.billing.test` },
        });
        const acme = mailing.site('acme');
        const prepaid = {
          initialFundingAmountInCents: 1500,
          autoReplenish: true,
          replenishToAmountInCents: 3000,
          replenishThresholdAmountInCents: 1000,
        };
        const signup = () =>
          s.subscribe({ productHandle: 'basic', paymentCollectionMethod: 'prepaid', prepaidConfiguration: prepaid });
        const target = await signup();
        const kept = await signup();
        /** The pending replenishment checks of a subscription (subject 0, the subscription in the key). */
        const checks = (id: number) =>
          f.storage.transaction(async (tx) =>
            (await tx.dueWork.pendingFor(s.siteId, 0, ['reconcile_payment']))
              .map((r) => r.uniqueKey)
              .filter((k) => k.startsWith(`prepaid_replenishment:${id}:`)),
          );
        /** The pending mail jobs of one kind about one subject (ids of different kinds may be equal). */
        const mail = (kind: string, subjectId: number) =>
          f.storage.transaction(async (tx) =>
            (await tx.dueWork.pendingFor(s.siteId, subjectId, ['mail_delivery']))
              .map((r) => r.uniqueKey)
              .filter((k) => k.startsWith(`mail:${kind}:${subjectId}:`)),
          );
        // The signups drew on their balances: each scheduled a replenishment check.
        expect((await checks(target.subscription.id)).length).toBeGreaterThan(0);
        expect((await checks(kept.subscription.id)).length).toBeGreaterThan(0);
        const subjects: [string, number][][] = [];
        for (const view of [target, kept]) {
          const [invoice] = (await acme.invoices.list({ subscriptionId: view.subscription.id })).invoices;
          await acme.mail.requestPaymentUpdate(view.subscription.id);
          await acme.mail.sendInvoice(invoice!.uid);
          await acme.portalAccess.enable(view.customer.id, { invite: true });
          subjects.push([
            ['payment_update_request', view.subscription.id],
            ['invoice', invoice!.id],
            ['portal_invitation', view.customer.id],
          ]);
        }
        const [ofTarget, ofKept] = subjects as [[string, number][], [string, number][]];
        for (const [kind, subject] of [...ofTarget, ...ofKept]) expect(await mail(kind, subject)).toHaveLength(1);

        await s.acme.subscriptions.purge(target.subscription.id, {
          ack: target.customer.id,
          cascade: ['customer', 'payment_profile'],
        });
        expect(await checks(target.subscription.id)).toEqual([]);
        expect((await checks(kept.subscription.id)).length).toBeGreaterThan(0);
        for (const [kind, subject] of ofTarget) expect(await mail(kind, subject), `${kind} ${subject}`).toEqual([]);
        for (const [kind, subject] of ofKept) expect(await mail(kind, subject), `${kind} ${subject}`).toHaveLength(1);
        // What is left runs: the other subscriber's three mails go out, none about the purged one.
        await mailing.runDue();
        expect(capture.sent.map((m) => [m.kind, m.to])).toEqual(
          expect.arrayContaining([
            ['payment_update_request', [kept.customer.email]],
            ['invoice', [kept.customer.email]],
            ['portal_invitation', [kept.customer.email]],
          ]),
        );
        expect(capture.sent).toHaveLength(3);
      });
    });
  });
}
