import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** `acme` with a 10.00-a-month product `basic`, and `globex` to prove records stay in their site. */
async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'America/New_York' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const product = await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  let n = 0;
  const subscribe = async (extra: Record<string, unknown> = {}) =>
    acme.subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` },
      creditCard: VISA,
      ...extra,
    });
  return { acme, globex: f.engine.site('globex'), family, product, subscribe };
}

/** Reason codes, coupon subcodes and usage, status actions, previews and settings, on every adapter. */
export function siteExtrasSuite(harness: StorageHarness): void {
  describe(`site extras (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-02-10T15:00:00Z');

    describe('reason codes', () => {
      it('creates, lists by position, reads, updates and deletes codes, in their site only', async () => {
        const f = fixture();
        const { acme, globex } = await setup(f);
        const expensive = await acme.reasonCodes.create({ code: 'TOO_EXPENSIVE', description: 'Too expensive' });
        const unused = await acme.reasonCodes.create({ code: 'unused', description: ' Not used ', position: 0 });
        // Omitted position: after the last code (the highest position plus one).
        expect(expensive.position).toBe(1);
        expect(unused).toMatchObject({ code: 'unused', description: 'Not used', position: 0 });
        const third = await acme.reasonCodes.create({ code: 'OTHER', description: 'Other' });
        expect(third.position).toBe(2);
        expect((await acme.reasonCodes.list()).map((c) => c.code)).toEqual(['unused', 'TOO_EXPENSIVE', 'OTHER']);
        expect((await acme.reasonCodes.list({ page: 2, perPage: 2 })).map((c) => c.code)).toEqual(['OTHER']);
        expect(await acme.reasonCodes.get(expensive.id)).toEqual(expensive);

        f.clock.advance({ minutes: 5 });
        const moved = await acme.reasonCodes.update(expensive.id, { position: 9, description: 'Price' });
        expect(moved).toMatchObject({ code: 'TOO_EXPENSIVE', description: 'Price', position: 9 });
        expect(moved.updatedAt.getTime()).toBe(expensive.updatedAt.getTime() + 5 * 60_000);
        expect((await acme.reasonCodes.list()).map((c) => c.code)).toEqual(['unused', 'OTHER', 'TOO_EXPENSIVE']);

        // Another site sees none of them, and cannot reach one by id.
        expect(await globex.reasonCodes.list()).toEqual([]);
        expect((await rejection(globex.reasonCodes.get(expensive.id))).code).toBe('not_found');
        expect((await rejection(globex.reasonCodes.delete(expensive.id))).code).toBe('not_found');

        await acme.reasonCodes.delete(unused.id);
        expect((await rejection(acme.reasonCodes.get(unused.id))).code).toBe('not_found');
        expect((await rejection(acme.reasonCodes.delete(unused.id))).code).toBe('not_found');
        expect((await acme.reasonCodes.list()).map((c) => c.code)).toEqual(['OTHER', 'TOO_EXPENSIVE']);
      });

      it('refuses blank fields, bad positions and a code taken in any letter case, changing nothing', async () => {
        const f = fixture();
        const { acme, globex } = await setup(f);
        const blank = await rejection(acme.reasonCodes.create({ code: ' ', position: -1 }));
        expect(blank.code).toBe('validation');
        expect(blank.messages).toEqual([
          'Code: cannot be blank.',
          'Description: cannot be blank.',
          'Position: must be a whole number, 0 or more.',
        ]);
        const code = await acme.reasonCodes.create({ code: 'CH1', description: 'Churn' });
        const taken = await rejection(acme.reasonCodes.create({ code: 'ch1', description: 'Again' }));
        expect(taken.messages).toEqual(['Code: has already been taken.']);
        const other = await acme.reasonCodes.create({ code: 'CH2', description: 'Two' });
        const renamed = await rejection(acme.reasonCodes.update(other.id, { code: 'Ch1' }));
        expect(renamed.messages).toEqual(['Code: has already been taken.']);
        expect(await acme.reasonCodes.get(other.id)).toEqual(other);
        // Codes are per site: globex may use the same one.
        await globex.reasonCodes.create({ code: 'CH1', description: 'Theirs' });
        expect((await acme.reasonCodes.list()).map((c) => c.id)).toEqual([code.id, other.id]);
        // Renaming a code to itself in another case is allowed.
        expect((await acme.reasonCodes.update(code.id, { code: 'ch1' })).code).toBe('ch1');
        expect((await rejection(acme.reasonCodes.update(987_654, { code: 'X' }))).code).toBe('not_found');
      });

      it('checks a cancellation’s reason code against the site’s codes and keeps it', async () => {
        const f = fixture();
        const { acme, globex, subscribe } = await setup(f);
        await acme.reasonCodes.create({ code: 'TOO_EXPENSIVE', description: 'Too expensive' });
        await globex.reasonCodes.create({ code: 'GLOBEX_ONLY', description: 'Not acme’s' });
        const sub = (await subscribe()).subscription;
        const unknown = await rejection(acme.subscriptions.cancel(sub.id, { reasonCode: 'GLOBEX_ONLY' }));
        expect(unknown.code).toBe('validation');
        expect(unknown.messages).toEqual(["Reason code: 'GLOBEX_ONLY' is not a reason code of this site."]);
        expect((await acme.subscriptions.get(sub.id)).subscription.state).toBe('active');

        const canceled = await acme.subscriptions.cancel(sub.id, { reasonCode: 'too_expensive' });
        expect(canceled.subscription.state).toBe('cancelled');
        // Kept in the site's spelling.
        expect(canceled.subscription.data.reasonCode).toBe('TOO_EXPENSIVE');

        // Delayed cancellations are checked the same way.
        const later = (await subscribe()).subscription;
        const bad = await rejection(acme.subscriptions.cancelAtEndOfPeriod(later.id, { reasonCode: 'NOPE' }));
        expect(bad.code).toBe('validation');
        const delayed = await acme.subscriptions.cancelAtEndOfPeriod(later.id, { reasonCode: 'TOO_EXPENSIVE' });
        expect(delayed.subscription.cancelAtEndOfPeriod).toBe(true);
        expect(delayed.subscription.data.reasonCode).toBe('TOO_EXPENSIVE');
        // No code (or a blank one) is still fine.
        const plain = (await subscribe()).subscription;
        expect((await acme.subscriptions.cancel(plain.id, { reasonCode: '' })).subscription.state).toBe('cancelled');
      });

      it('takes any reason code as the client’s own text on a site that keeps none', async () => {
        const f = fixture();
        const { acme, subscribe } = await setup(f);
        const sub = (await subscribe()).subscription;
        const canceled = await acme.subscriptions.cancel(sub.id, { reasonCode: ' price ' });
        expect(canceled.subscription.state).toBe('cancelled');
        expect(canceled.subscription.data.reasonCode).toBe('price');
      });
    });

    describe('coupon subcodes and usage', () => {
      it('creates subcodes, sorting codes into created, duplicate and invalid, and lists and deletes them', async () => {
        const f = fixture();
        const { acme, globex, family } = await setup(f);
        const coupon = await acme.coupons.create({
          name: 'Ten',
          code: 'SAVE10',
          percentage: '10',
          productFamilyId: family.id,
        });
        const other = await acme.coupons.create({
          name: 'Five',
          code: 'FIVE',
          amountInCents: 500,
          productFamilyId: family.id,
        });
        const result = await acme.coupons.createSubcodes(coupon.id, [
          'sub-a',
          'SUB.B',
          'sub-a',
          'five',
          'save10',
          'bad code!',
          '',
          42,
        ]);
        expect(result).toEqual({
          createdCodes: ['SUB-A', 'SUB.B'],
          // Repeated in the request, another coupon's code, the coupon's own code.
          duplicateCodes: ['SUB-A', 'FIVE', 'SAVE10'],
          invalidCodes: ['bad code!', '', '42'],
        });
        // A subcode of one coupon is taken for every other coupon and for new coupon codes.
        expect(await acme.coupons.createSubcodes(other.id, ['Sub-A', 'OWN'])).toEqual({
          createdCodes: ['OWN'],
          duplicateCodes: ['SUB-A'],
          invalidCodes: [],
        });
        const clash = await rejection(
          acme.coupons.create({ name: 'X', code: 'sub.b', percentage: '5', productFamilyId: family.id }),
        );
        expect(clash.messages).toEqual(['Code: must be unique - that value has been taken.']);
        expect((await rejection(acme.coupons.update(other.id, { code: 'SUB-A' }))).messages).toEqual([
          'Code: must be unique - that value has been taken.',
        ]);
        // Another site may use the same codes.
        const globexFamily = await globex.catalog.createFamily({ name: 'G' });
        const theirs = await globex.coupons.create({
          name: 'G',
          code: 'G1',
          percentage: '5',
          productFamilyId: globexFamily.id,
        });
        expect((await globex.coupons.createSubcodes(theirs.id, ['SUB-A'])).createdCodes).toEqual(['SUB-A']);
        expect((await rejection(globex.coupons.listSubcodes(coupon.id))).code).toBe('not_found');

        expect(await acme.coupons.listSubcodes(coupon.id)).toEqual(['SUB-A', 'SUB.B']);
        expect(await acme.coupons.listSubcodes(coupon.id, { page: 2, perPage: 1 })).toEqual(['SUB.B']);
        expect(await acme.coupons.listSubcodes(other.id)).toEqual(['OWN']);

        // Lookups by a subcode find the parent coupon, in any letter case.
        expect((await acme.coupons.findByCode('sub.b')).id).toBe(coupon.id);
        expect((await acme.coupons.validate('Sub-A')).id).toBe(coupon.id);
        expect((await globex.coupons.findByCode('sub-a')).id).toBe(theirs.id);

        await acme.coupons.deleteSubcode(coupon.id, 'sub.b');
        expect(await acme.coupons.listSubcodes(coupon.id)).toEqual(['SUB-A']);
        expect((await rejection(acme.coupons.deleteSubcode(coupon.id, 'SUB.B'))).code).toBe('not_found');
        // A subcode of another coupon is not this coupon's to delete.
        expect((await rejection(acme.coupons.deleteSubcode(coupon.id, 'OWN'))).code).toBe('not_found');
        expect((await rejection(acme.coupons.findByCode('SUB.B'))).code).toBe('not_found');
        expect((await rejection(acme.coupons.createSubcodes(coupon.id, 'SUB'))).messages).toEqual([
          'Codes: must be a list of codes.',
        ]);
      });

      it('replaces every subcode of a coupon at once', async () => {
        const f = fixture();
        const { acme, family } = await setup(f);
        const coupon = await acme.coupons.create({
          name: 'Ten',
          code: 'SAVE10',
          percentage: '10',
          productFamilyId: family.id,
        });
        await acme.coupons.createSubcodes(coupon.id, ['OLD1', 'OLD2']);
        const replaced = await acme.coupons.replaceSubcodes(coupon.id, ['old2', 'NEW1', '!']);
        // OLD2 was removed first, so sending it again creates it.
        expect(replaced).toEqual({ createdCodes: ['OLD2', 'NEW1'], duplicateCodes: [], invalidCodes: ['!'] });
        expect(await acme.coupons.listSubcodes(coupon.id)).toEqual(['OLD2', 'NEW1']);
        expect((await rejection(acme.coupons.findByCode('OLD1'))).code).toBe('not_found');
        expect(await acme.coupons.replaceSubcodes(coupon.id, [])).toEqual({
          createdCodes: [],
          duplicateCodes: [],
          invalidCodes: [],
        });
        expect(await acme.coupons.listSubcodes(coupon.id)).toEqual([]);
      });

      it('applies the parent coupon at signup by a subcode, and reports usage per product', async () => {
        const f = fixture();
        const { acme, family, product, subscribe } = await setup(f);
        const pro = await acme.catalog.createProduct(family.id, {
          name: 'Pro',
          handle: 'pro',
          priceInCents: 5000,
          interval: 1,
          intervalUnit: 'month',
        });
        const coupon = await acme.coupons.create({
          name: 'Ten',
          code: 'SAVE10',
          percentage: '10',
          productFamilyId: family.id,
        });
        await acme.coupons.createSubcodes(coupon.id, ['FRIEND']);
        const bySubcode = await subscribe({ couponCode: 'friend' });
        // The subscription holds the coupon's own code, so deleting the subcode changes nothing for it.
        expect(bySubcode.subscription.couponCodes).toEqual(['SAVE10']);
        await subscribe({ couponCode: 'SAVE10' });
        await subscribe({ productHandle: 'pro', couponCode: 'FRIEND' });
        await subscribe();
        expect((await acme.coupons.get(coupon.id)).redemptions).toBe(3);
        await acme.coupons.deleteSubcode(coupon.id, 'FRIEND');
        expect((await acme.subscriptions.get(bySubcode.subscription.id)).subscription.couponCodes).toEqual(['SAVE10']);

        const usage = await acme.coupons.usage(coupon.id, family.id);
        // Basic: two signups at 10.00 less 1.00; Pro: one at 50.00 less 5.00. Every charge was paid.
        expect(usage).toEqual([
          {
            productId: product.product.id,
            productName: 'Basic',
            signups: 2,
            savingsInCents: 200,
            revenueInCents: 1800,
          },
          { productId: pro.product.id, productName: 'Pro', signups: 1, savingsInCents: 500, revenueInCents: 4500 },
        ]);
        const otherFamily = await acme.catalog.createFamily({ name: 'Other' });
        expect((await rejection(acme.coupons.usage(coupon.id, otherFamily.id))).code).toBe('not_found');
        expect((await rejection(acme.coupons.usage(987_654))).code).toBe('not_found');
      });
    });

    describe('status actions', () => {
      it('cancels dunning: a past-due subscription returns to active and no retry runs; others are refused', async () => {
        const f = fixture();
        const { acme, subscribe } = await setup(f);
        const { subscription } = await subscribe();
        const notInDunning = await rejection(acme.subscriptions.cancelDunning(subscription.id));
        expect(notInDunning.code).toBe('invalid_transition');
        f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
        f.clock.set('2026-03-10T16:00:00Z');
        await f.engine.runDue();
        expect((await acme.subscriptions.get(subscription.id)).subscription.state).toBe('past_due');
        const chargesBefore = f.gateway.chargeCalls;

        const stopped = await acme.subscriptions.cancelDunning(subscription.id);
        expect(stopped.subscription.state).toBe('active');
        // The balance is still owed: canceling dunning does not forgive it.
        expect(stopped.balanceInCents).toBe(1000);
        const changes = await acme.events.list({ filter: ['subscription_state_change'] });
        expect(changes[0]?.event.payload).toMatchObject({
          subscription: { state: 'active', previous_state: 'past_due' },
        });
        // The retries that were due in the following days do not run.
        f.clock.set('2026-03-20T16:00:00Z');
        await f.engine.runDue();
        expect(f.gateway.chargeCalls).toBe(chargesBefore);
        expect((await acme.subscriptions.get(subscription.id)).subscription.state).toBe('active');
        expect((await rejection(acme.subscriptions.cancelDunning(subscription.id))).code).toBe('invalid_transition');
      });

      it('previews the next renewal line by line with its coupon discount, and changes nothing', async () => {
        const f = fixture();
        const { acme, family, subscribe } = await setup(f);
        await acme.coupons.create({
          name: 'Ten',
          code: 'SAVE10',
          percentage: '10',
          recurring: true,
          productFamilyId: family.id,
        });
        const { subscription } = await subscribe({ couponCode: 'SAVE10' });
        const before = await acme.subscriptions.get(subscription.id);
        const preview = await acme.subscriptions.previewRenewal(subscription.id);
        // A month on in the site's zone: 10:00 New York time, after the change to summer time.
        expect(preview.nextAssessmentAt.toISOString()).toBe('2026-03-10T14:00:00.000Z');
        expect(preview.manifest).toMatchObject({
          subtotalInCents: 1000,
          totalDiscountInCents: 100,
          totalInCents: 900,
          totalTaxInCents: 0,
        });
        expect(preview.manifest.lineItems).toEqual([
          expect.objectContaining({ transactionType: 'charge', amountInCents: 1000, discountAmountInCents: 100 }),
        ]);
        expect(preview.existingBalanceInCents).toBe(0);
        expect(preview.totalAmountDueInCents).toBe(900);
        expect(await acme.subscriptions.get(subscription.id)).toEqual(before);
        await acme.subscriptions.cancel(subscription.id);
        expect((await rejection(acme.subscriptions.previewRenewal(subscription.id))).code).toBe('invalid_transition');
      });
    });
  });
}
