import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PREVIEWABLE, snapshot } from './preview.suite.js';

describe('preview properties (memory)', () => {
  it('for any previewable command at any instant of the period, the preview equals the effect and changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: PREVIEWABLE.length - 1 }),
        fc.integer({ min: 0, max: 29 * 86_400 - 1 }),
        async (which, seconds) => {
          const clock = new ManualClock('2027-04-01T00:00:00Z');
          const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway: createTestGateway() });
          await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
          const acme = engine.site('acme');
          const family = await acme.catalog.createFamily({ name: 'Plans' });
          await acme.catalog.createProduct(family.id, {
            name: 'Basic',
            handle: 'basic',
            priceInCents: 3000,
            interval: 1,
            intervalUnit: 'month',
          });
          await acme.catalog.createProduct(family.id, {
            name: 'Pro',
            handle: 'pro',
            priceInCents: 9000,
            interval: 1,
            intervalUnit: 'month',
          });
          const { subscription } = await acme.subscriptions.create({
            productHandle: 'basic',
            customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
            creditCard: { fullNumber: '1', expirationMonth: 1, expirationYear: 2040 },
          });
          clock.advance({ seconds });
          const [, command] = PREVIEWABLE[which]!;
          const before = await snapshot(engine, subscription.id);
          const preview = await engine.preview('acme', (site) => command(site, subscription.id));
          expect(await snapshot(engine, subscription.id)).toEqual(before);
          await command(acme, subscription.id);
          const after = await snapshot(engine, subscription.id);
          const strip = (l: {
            type: string;
            kind: string | null;
            amountInCents: number;
            endingBalanceInCents: number;
          }) => [l.type, l.kind, l.amountInCents, l.endingBalanceInCents];
          expect(preview.ledger.map(strip)).toEqual(after.lines.slice(before.lines.length).map(strip));
          expect(preview.events.map((e) => e.key)).toEqual(after.outbox.slice(before.outbox.length).map((e) => e.key));
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);
});
