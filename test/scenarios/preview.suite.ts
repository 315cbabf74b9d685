import type { BillingEngine, SiteHandle } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** Commands to preview, each given a site handle and the subscription id. */
export const PREVIEWABLE: readonly [string, (site: SiteHandle, id: number) => Promise<unknown>][] = [
  ['one-time charge', (site, id) => site.ledger.charge(id, { amount: '12.34', memo: 'Extra' })],
  ['credit', (site, id) => site.ledger.credit(id, { amountInCents: 250, memo: 'Sorry' })],
  ['adjustment to a target', (site, id) => site.ledger.adjust(id, { amountInCents: 777, adjustmentMethod: 'target' })],
  ['upgrade migration', (site, id) => site.subscriptions.migrate(id, { productHandle: 'pro' })],
  [
    'migration keeping the period',
    (site, id) => site.subscriptions.migrate(id, { productHandle: 'pro', preservePeriod: true }),
  ],
  ['cancel', (site, id) => site.subscriptions.cancel(id, { cancellationMessage: 'bye' })],
  ['billing date now', (site, id) => site.subscriptions.changeBillingDate(id, '2000-01-01')],
];

async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
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
  const sub = await acme.subscriptions.create({
    productHandle: 'basic',
    customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
    creditCard: VISA,
  });
  return { acme, id: sub.subscription.id };
}

/** Everything a command could change, to compare before and after a preview. */
export async function snapshot(engine: BillingEngine, id: number) {
  const site = engine.site('acme');
  const view = await site.subscriptions.get(id);
  const siteId = (await engine.sites.get('acme')).id;
  return {
    view,
    lines: await site.subscriptions.transactions(id),
    outbox: await engine.storage.transaction((tx) => tx.outbox.listAfter(siteId, 0, 10_000)),
    due: await engine.storage.transaction((tx) => tx.dueWork.pendingFor(siteId, id)),
  };
}

const comparableLines = (
  lines: readonly {
    type: string;
    kind: string | null;
    amountInCents: number;
    startingBalanceInCents: number;
    endingBalanceInCents: number;
    memo: string;
  }[],
) => lines.map((l) => [l.type, l.kind, l.amountInCents, l.startingBalanceInCents, l.endingBalanceInCents, l.memo]);

/** Previews change nothing and predict exactly what the command does, on every adapter. */
export function previewScenarios(harness: StorageHarness): void {
  describe(`preview of commands (${harness.name})`, () => {
    const fixture = useEngine(harness, '2027-04-01T00:00:00Z');

    for (const [name, command] of PREVIEWABLE) {
      it(`previews a ${name} exactly, leaving no trace`, async () => {
        const f = fixture();
        const { id } = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        const before = await snapshot(f.engine, id);
        const calls = f.gateway.chargeCalls;
        const preview = await f.engine.preview('acme', (site) => command(site, id));
        expect(await snapshot(f.engine, id)).toEqual(before);
        expect(f.gateway.chargeCalls).toBe(calls);
        const events: string[] = [];
        f.engine.on('*', (e) => events.push(e.key));
        await command(f.engine.site('acme'), id);
        const after = await snapshot(f.engine, id);
        expect(comparableLines(preview.ledger)).toEqual(comparableLines(after.lines.slice(before.lines.length)));
        expect(preview.events.map((e) => e.key)).toEqual(events);
        expect(preview.charges.map((c) => c.amountInCents)).toEqual(
          after.lines
            .slice(before.lines.length)
            .filter((l) => l.type === 'payment')
            .map((l) => l.amountInCents),
        );
      });
    }

    it('throws what the command would throw, and keeps nothing', async () => {
      const f = fixture();
      const { id } = await setup(f);
      const before = await snapshot(f.engine, id);
      const error = await rejection(
        f.engine.preview('acme', (site) => site.ledger.charge(id, { amount: 'x', memo: '' })),
      );
      expect(error.messages).toContain('Memo: cannot be blank.');
      expect(await snapshot(f.engine, id)).toEqual(before);
    });
  });
}
