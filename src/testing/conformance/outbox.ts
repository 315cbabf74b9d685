import assert from 'node:assert/strict';
import { newSiteFixture, type SectionContext, T0 } from './harness.js';

/** Cases for the transactional outbox. */
export function outboxCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('outbox', () => {
    it('appends events with increasing ids and lists them per site after an id', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('out-a')),
        await tx.sites.insert(newSiteFixture('out-b')),
      ]);
      const event = (siteId: number, key: string) => ({
        siteId,
        key,
        subjectType: 'subscription',
        subjectId: 7,
        payload: { nested: { value: key, n: 1, flag: true, none: null } },
        occurredAt: T0,
      });
      const appended = await storage().transaction((tx) =>
        tx.outbox.append([event(a.id, 'one'), event(b.id, 'other'), event(a.id, 'two'), event(a.id, 'three')]),
      );
      assert.equal(appended.length, 4);
      for (let i = 1; i < appended.length; i++) assert.ok(appended[i]!.id > appended[i - 1]!.id);
      const first = await storage().transaction((tx) => tx.outbox.listAfter(a.id, 0, 2));
      assert.deepEqual(
        first.map((e) => e.key),
        ['one', 'two'],
      );
      const rest = await storage().transaction((tx) => tx.outbox.listAfter(a.id, first[1]!.id, 10));
      assert.deepEqual(
        rest.map((e) => e.key),
        ['three'],
      );
      assert.deepEqual(rest[0]!.payload, { nested: { value: 'three', n: 1, flag: true, none: null } });
      assert.equal(rest[0]!.occurredAt.getTime(), T0.getTime());
      assert.deepEqual(await storage().transaction((tx) => tx.outbox.findById(a.id, appended[0]!.id)), appended[0]);
      assert.equal(await storage().transaction((tx) => tx.outbox.findById(b.id, appended[0]!.id)), undefined);
    });
  });
}
