import assert from 'node:assert/strict';
import type { Storage } from 'billing-engine';
import { at, newSiteFixture, type SectionContext, T0 } from './harness.js';

const MINUTE = 60_000;

async function siteWithWork(storage: Storage, subdomain: string) {
  return storage.transaction(async (tx) => {
    const site = await tx.sites.insert(newSiteFixture(subdomain));
    // Scheduled out of due order on purpose: claims must come back ordered by due time, then id.
    await tx.dueWork.schedule({
      siteId: site.id,
      kind: 'renewal',
      subjectId: 2,
      dueAt: at(T0, 2 * MINUTE),
      uniqueKey: 'renewal:2:1',
    });
    await tx.dueWork.schedule({
      siteId: site.id,
      kind: 'renewal',
      subjectId: 1,
      dueAt: at(T0, MINUTE),
      uniqueKey: 'renewal:1:1',
    });
    await tx.dueWork.schedule({
      siteId: site.id,
      kind: 'expiration',
      subjectId: 3,
      dueAt: at(T0, MINUTE),
      uniqueKey: 'expiration:3',
    });
    await tx.dueWork.schedule({
      siteId: site.id,
      kind: 'renewal',
      subjectId: 4,
      dueAt: at(T0, 60 * MINUTE),
      uniqueKey: 'renewal:4:1',
    });
    return site;
  });
}

/** Cases for scheduled work and its claims. */
export function dueWorkCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('due work', () => {
    it('schedules once per unique key, whatever the status of the first row', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('due-key')));
      const work = {
        siteId: site.id,
        kind: 'renewal' as const,
        subjectId: 1,
        dueAt: T0,
        uniqueKey: 'renewal:1:5',
        payload: { period: 5 },
      };
      const first = await storage().transaction((tx) => tx.dueWork.schedule(work));
      assert.equal(first?.status, 'pending');
      assert.deepEqual(first?.payload, { period: 5 });
      assert.equal(first?.attempts, 0);
      assert.equal(await storage().transaction((tx) => tx.dueWork.schedule({ ...work, dueAt: at(T0, 1) })), undefined);
      const [claimed] = await storage().transaction((tx) =>
        tx.dueWork.claim({ until: T0, limit: 10, owner: 'w1', leaseUntil: at(T0, MINUTE), now: T0 }),
      );
      assert.equal(claimed?.id, first?.id);
      assert.equal(await storage().transaction((tx) => tx.dueWork.complete(site.id, first!.id, 'w1', T0)), true);
      assert.equal(await storage().transaction((tx) => tx.dueWork.schedule(work)), undefined, 'a done key stays taken');
      const found = await storage().transaction((tx) => tx.dueWork.findByKey(site.id, 'renewal:1:5'));
      assert.equal(found?.status, 'done');
    });

    it('schedules several rows at once, skipping taken keys, as schedule does one by one', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('due-many')));
      const work = (key: string, minutes: number, payload: Record<string, unknown> = {}) => ({
        siteId: site.id,
        kind: 'renewal' as const,
        subjectId: 7,
        dueAt: at(T0, minutes * MINUTE),
        uniqueKey: key,
        payload,
      });
      const taken = await storage().transaction((tx) => tx.dueWork.schedule(work('many:taken', 1, { first: true })));
      await storage().transaction((tx) =>
        tx.dueWork.scheduleAll([
          work('many:a', 3, { n: 1 }),
          work('many:taken', 2, { first: false }),
          { ...work('many:b', 4), kind: 'notice' },
        ]),
      );
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.dueWork.findByKey(site.id, 'many:taken'), taken, 'a taken key keeps its row');
        const a = await tx.dueWork.findByKey(site.id, 'many:a');
        assert.equal(a?.status, 'pending');
        assert.deepEqual(a?.payload, { n: 1 });
        assert.equal(a?.dueAt.getTime(), at(T0, 3 * MINUTE).getTime());
        assert.equal((await tx.dueWork.findByKey(site.id, 'many:b'))?.kind, 'notice');
        await tx.dueWork.scheduleAll([]);
        assert.equal((await tx.dueWork.pendingFor(site.id, 7)).length, 3, 'an empty list schedules nothing');
      });
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.dueWork.scheduleAll([work('many:rolled-back', 5)]);
          throw new Error('abort');
        }),
        /abort/,
      );
      assert.equal(await storage().transaction((tx) => tx.dueWork.findByKey(site.id, 'many:rolled-back')), undefined);
    });

    it('claims due rows in due order, within the limit and the filters', async () => {
      const site = await siteWithWork(storage(), 'due-order');
      const claimAll = (owner: string, limit: number, extra = {}) =>
        storage().transaction((tx) =>
          tx.dueWork.claim({
            until: at(T0, 10 * MINUTE),
            limit,
            owner,
            leaseUntil: at(T0, 5 * MINUTE),
            now: T0,
            ...extra,
          }),
        );
      const renewalsOnly = await claimAll('w0', 10, { kinds: ['expiration'], siteId: site.id + 1000 });
      assert.deepEqual(renewalsOnly, [], 'the site filter excludes other sites');
      const first = await claimAll('w1', 2);
      assert.deepEqual(
        first.map((r) => r.uniqueKey),
        ['renewal:1:1', 'expiration:3'],
      );
      for (const row of first) {
        assert.equal(row.status, 'claimed');
        assert.equal(row.claimedBy, 'w1');
        assert.equal(row.leaseUntil?.getTime(), at(T0, 5 * MINUTE).getTime());
      }
      const second = await claimAll('w2', 10);
      assert.deepEqual(
        second.map((r) => r.uniqueKey),
        ['renewal:2:1'],
        'held rows and rows not yet due are not claimed',
      );
      assert.deepEqual(await claimAll('w3', 10), []);
    });

    it("hands out a subscription's work one row at a time, earliest first, even to other workers", async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('due-subject')));
      const schedule = (
        kind: 'notice' | 'renewal' | 'dunning_retry' | 'reconcile_payment',
        subjectId: number,
        minutes: number,
      ) =>
        storage().transaction((tx) =>
          tx.dueWork.schedule({
            siteId: site.id,
            kind,
            subjectId,
            dueAt: at(T0, minutes * MINUTE),
            uniqueKey: `${kind}:${subjectId}:${minutes}`,
          }),
        );
      await schedule('renewal', 7, 3);
      await schedule('notice', 7, 1);
      await schedule('renewal', 8, 2);
      // Another kind of subject sharing the number is not held back.
      await schedule('reconcile_payment', 7, 2);
      const claim = (owner: string, now = T0) =>
        storage().transaction((tx) =>
          tx.dueWork.claim({ until: at(T0, 10 * MINUTE), limit: 10, owner, leaseUntil: at(now, 5 * MINUTE), now }),
        );
      const first = await claim('w1');
      assert.deepEqual(
        first.map((r) => r.uniqueKey),
        ['notice:7:1', 'renewal:8:2', 'reconcile_payment:7:2'],
      );
      assert.deepEqual(await claim('w2'), [], 'a held earlier row keeps the later one back from other workers');
      const notice = first[0]!;
      // Work the notice schedules before the renewal runs first.
      await schedule('dunning_retry', 7, 2);
      assert.equal(await storage().transaction((tx) => tx.dueWork.complete(site.id, notice.id, 'w1', T0)), true);
      assert.deepEqual(
        (await claim('w2')).map((r) => r.uniqueKey),
        ['dunning_retry:7:2'],
      );
      const retry = (await storage().transaction((tx) => tx.dueWork.findByKey(site.id, 'dunning_retry:7:2')))!;
      assert.equal(await storage().transaction((tx) => tx.dueWork.complete(site.id, retry.id, 'w2', T0)), true);
      assert.deepEqual(
        (await claim('w3')).map((r) => r.uniqueKey),
        ['renewal:7:3'],
      );
    });

    it('counts the open rows due by an instant, by kind and by site', async () => {
      const site = await siteWithWork(storage(), 'due-count');
      const other = await siteWithWork(storage(), 'due-count-other');
      const count = (args: { until: Date; kinds?: readonly ('renewal' | 'expiration')[]; siteId?: number }) =>
        storage().transaction((tx) => tx.dueWork.countDue(args));
      assert.equal(await count({ until: at(T0, 10 * MINUTE), siteId: site.id }), 3);
      assert.equal(await count({ until: at(T0, 10 * MINUTE) }), 6);
      assert.equal(await count({ until: at(T0, 60 * MINUTE), siteId: other.id }), 4);
      assert.equal(await count({ until: at(T0, MINUTE), kinds: ['renewal'], siteId: site.id }), 1);
      assert.equal(await count({ until: at(T0, 10 * MINUTE), kinds: [], siteId: site.id }), 0);
      const [claimed] = await storage().transaction((tx) =>
        tx.dueWork.claim({
          until: at(T0, MINUTE),
          limit: 1,
          owner: 'w1',
          leaseUntil: at(T0, 5 * MINUTE),
          now: T0,
          siteId: site.id,
        }),
      );
      assert.equal(await count({ until: at(T0, 10 * MINUTE), siteId: site.id }), 3, 'a claimed row is still open');
      await storage().transaction((tx) => tx.dueWork.complete(site.id, claimed!.id, 'w1', T0));
      assert.equal(await count({ until: at(T0, 10 * MINUTE), siteId: site.id }), 2, 'a done row is not');
    });

    it('lets another worker take a row whose lease lapsed, and only the holder complete it', async () => {
      const site = await siteWithWork(storage(), 'due-lease');
      const [row] = await storage().transaction((tx) =>
        tx.dueWork.claim({ until: at(T0, MINUTE), limit: 1, owner: 'w1', leaseUntil: at(T0, 2 * MINUTE), now: T0 }),
      );
      assert.ok(row);
      const early = await storage().transaction((tx) =>
        tx.dueWork.claim({
          until: at(T0, MINUTE),
          limit: 1,
          owner: 'w2',
          leaseUntil: at(T0, 9 * MINUTE),
          now: at(T0, 2 * MINUTE - 1),
        }),
      );
      assert.equal(early[0]?.id === row.id, false, 'a held lease is respected');
      const late = await storage().transaction((tx) =>
        tx.dueWork.claim({
          until: at(T0, MINUTE),
          limit: 5,
          owner: 'w3',
          leaseUntil: at(T0, 9 * MINUTE),
          now: at(T0, 2 * MINUTE),
        }),
      );
      assert.ok(late.some((r) => r.id === row.id && r.claimedBy === 'w3'));
      assert.equal(await storage().transaction((tx) => tx.dueWork.complete(site.id, row.id, 'w1', T0)), false);
      assert.equal(await storage().transaction((tx) => tx.dueWork.complete(site.id + 1, row.id, 'w3', T0)), false);
      assert.equal(await storage().transaction((tx) => tx.dueWork.complete(site.id, row.id, 'w3', T0)), true);
      const again = await storage().transaction((tx) =>
        tx.dueWork.claim({
          until: at(T0, 100 * MINUTE),
          limit: 10,
          owner: 'w4',
          leaseUntil: at(T0, 200 * MINUTE),
          now: at(T0, 100 * MINUTE),
        }),
      );
      assert.equal(
        again.some((r) => r.id === row.id),
        false,
        'done rows are never claimed again',
      );
    });

    it('releases a claimed row to a new due time with one more attempt', async () => {
      const site = await siteWithWork(storage(), 'due-release');
      const [row] = await storage().transaction((tx) =>
        tx.dueWork.claim({ until: at(T0, MINUTE), limit: 1, owner: 'w1', leaseUntil: at(T0, 2 * MINUTE), now: T0 }),
      );
      assert.ok(row);
      assert.equal(
        await storage().transaction((tx) => tx.dueWork.release(site.id, row.id, 'w2', at(T0, 30 * MINUTE), T0)),
        false,
      );
      assert.equal(
        await storage().transaction((tx) => tx.dueWork.release(site.id, row.id, 'w1', at(T0, 30 * MINUTE), T0)),
        true,
      );
      const stored = await storage().transaction((tx) => tx.dueWork.findByKey(site.id, row.uniqueKey));
      assert.equal(stored?.status, 'pending');
      assert.equal(stored?.attempts, 1);
      assert.equal(stored?.claimedBy, null);
      assert.equal(stored?.dueAt.getTime(), at(T0, 30 * MINUTE).getTime());
    });

    it('lists and cancels open work of one subject, and reports the next due time', async () => {
      const site = await siteWithWork(storage(), 'due-cancel');
      await storage().transaction((tx) =>
        tx.dueWork.schedule({
          siteId: site.id,
          kind: 'dunning_retry',
          subjectId: 1,
          dueAt: at(T0, 3 * MINUTE),
          uniqueKey: 'retry:1:1',
        }),
      );
      const open = await storage().transaction((tx) => tx.dueWork.pendingFor(site.id, 1));
      assert.deepEqual(
        open.map((r) => r.uniqueKey),
        ['renewal:1:1', 'retry:1:1'],
      );
      const onlyRetries = await storage().transaction((tx) => tx.dueWork.pendingFor(site.id, 1, ['dunning_retry']));
      assert.deepEqual(
        onlyRetries.map((r) => r.uniqueKey),
        ['retry:1:1'],
      );
      assert.equal(
        await storage()
          .transaction((tx) => tx.dueWork.nextDueAt(site.id))
          .then((d) => d?.getTime()),
        at(T0, MINUTE).getTime(),
      );
      assert.equal(await storage().transaction((tx) => tx.dueWork.cancelFor(site.id, 1, ['renewal'], T0)), 1);
      assert.deepEqual(
        (await storage().transaction((tx) => tx.dueWork.pendingFor(site.id, 1))).map((r) => r.uniqueKey),
        ['retry:1:1'],
      );
      assert.equal(await storage().transaction((tx) => tx.dueWork.cancelFor(site.id, 1, undefined, T0)), 1);
      assert.deepEqual(await storage().transaction((tx) => tx.dueWork.pendingFor(site.id, 1)), []);
      const canceled = await storage().transaction((tx) => tx.dueWork.findByKey(site.id, 'renewal:1:1'));
      assert.equal(canceled?.status, 'canceled');
      const claimable = await storage().transaction((tx) =>
        tx.dueWork.claim({
          until: at(T0, 10 * MINUTE),
          limit: 10,
          owner: 'w',
          leaseUntil: at(T0, 20 * MINUTE),
          now: T0,
        }),
      );
      assert.equal(
        claimable.some((r) => r.subjectId === 1),
        false,
        'canceled rows are never claimed',
      );
      assert.equal(await storage().transaction((tx) => tx.dueWork.nextDueAt(site.id + 999)), undefined);
    });
  });
}
