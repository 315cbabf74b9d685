import assert from 'node:assert/strict';
import type { NoteRecord, Storage, SubscriptionRecord } from 'billing-engine';
import { type BillingSeed, seedBillingSite, subscriptionFixture } from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

async function subscription(storage: Storage, seed: BillingSeed): Promise<SubscriptionRecord> {
  return storage.transaction((tx) => tx.subscriptions.insert(subscriptionFixture(seed.customer, seed.product)));
}

/** A new note of a subscription. */
function noteFixture(sub: SubscriptionRecord, overrides: Partial<Omit<NoteRecord, 'id'>> = {}): Omit<NoteRecord, 'id'> {
  return {
    siteId: sub.siteId,
    subscriptionId: sub.id,
    body: 'Called the customer.\nThey will pay on Friday.',
    sticky: false,
    createdAt: at(T0, 1),
    updatedAt: at(T0, 2),
    ...overrides,
  };
}

/** Cases for the notes repository: exact round trips, partial updates, deletes, tenancy and rollback. */
export function noteCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('notes', () => {
    it('inserts and finds notes with exact fields, listing a subscription’s notes by id', async () => {
      const seed = await seedBillingSite(storage(), 'note-ins');
      const s1 = await subscription(storage(), seed);
      const s2 = await subscription(storage(), seed);
      const [n1, other, n2] = await storage().transaction(async (tx) => [
        await tx.notes.insert(noteFixture(s1)),
        await tx.notes.insert(noteFixture(s2, { body: 'other' })),
        await tx.notes.insert(noteFixture(s1, { body: 'ünïcödé ✓', sticky: true })),
      ]);
      assert.ok(n1 && other && n2);
      assert.ok(Number.isSafeInteger(n1.id) && n1.id > 0);
      const { id: _id, ...fields } = n1;
      assert.deepEqual(fields, noteFixture(s1), 'fields are stored as given');
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.notes.findById(seed.site.id, n2.id), n2);
        assert.equal((await tx.notes.findById(seed.site.id, n2.id))?.sticky, true, 'booleans stay booleans');
        assert.equal((await tx.notes.findById(seed.site.id, n1.id))?.sticky, false);
        assert.equal((await tx.notes.findById(seed.site.id, n1.id))?.updatedAt.getTime(), at(T0, 2).getTime());
        assert.deepEqual(await tx.notes.listForSubscription(seed.site.id, s1.id), [n1, n2]);
        assert.deepEqual(await tx.notes.listForSubscription(seed.site.id, s2.id), [other]);
        assert.equal(await tx.notes.findById(seed.site.id, 987_654), undefined);
      });
    });

    it('updates only the given fields and reports a missing note as undefined', async () => {
      const seed = await seedBillingSite(storage(), 'note-upd');
      const sub = await subscription(storage(), seed);
      const note = await storage().transaction((tx) => tx.notes.insert(noteFixture(sub)));
      const later = at(T0, 5000);
      const sticky = await storage().transaction((tx) =>
        tx.notes.update(seed.site.id, note.id, { sticky: true, updatedAt: later }),
      );
      assert.deepEqual(sticky, { ...note, sticky: true, updatedAt: later });
      const body = await storage().transaction((tx) => tx.notes.update(seed.site.id, note.id, { body: 'Rewritten' }));
      assert.deepEqual(body, { ...note, sticky: true, updatedAt: later, body: 'Rewritten' });
      assert.deepEqual(await storage().transaction((tx) => tx.notes.findById(seed.site.id, note.id)), body);
      assert.equal(
        await storage().transaction((tx) => tx.notes.update(seed.site.id, 987_654, { body: 'x' })),
        undefined,
      );
    });

    it('deletes a note once', async () => {
      const seed = await seedBillingSite(storage(), 'note-del');
      const sub = await subscription(storage(), seed);
      const [keep, drop] = await storage().transaction(async (tx) => [
        await tx.notes.insert(noteFixture(sub, { body: 'keep' })),
        await tx.notes.insert(noteFixture(sub, { body: 'drop' })),
      ]);
      assert.ok(keep && drop);
      assert.equal(await storage().transaction((tx) => tx.notes.delete(seed.site.id, drop.id)), true);
      assert.equal(await storage().transaction((tx) => tx.notes.delete(seed.site.id, drop.id)), false);
      await storage().transaction(async (tx) => {
        assert.equal(await tx.notes.findById(seed.site.id, drop.id), undefined);
        assert.deepEqual(await tx.notes.listForSubscription(seed.site.id, sub.id), [keep]);
      });
    });

    it('keeps notes to their site: another site can neither read, change nor delete them', async () => {
      const seed = await seedBillingSite(storage(), 'note-ten');
      const other = await seedBillingSite(storage(), 'note-ten-other');
      const sub = await subscription(storage(), seed);
      const note = await storage().transaction((tx) => tx.notes.insert(noteFixture(sub)));
      await storage().transaction(async (tx) => {
        assert.equal(await tx.notes.findById(other.site.id, note.id), undefined);
        assert.deepEqual(await tx.notes.listForSubscription(other.site.id, sub.id), []);
        assert.equal(await tx.notes.update(other.site.id, note.id, { body: 'hijacked' }), undefined);
        assert.equal(await tx.notes.delete(other.site.id, note.id), false);
      });
      assert.deepEqual(await storage().transaction((tx) => tx.notes.findById(seed.site.id, note.id)), note);
    });

    it('hands out copies and leaves no trace of a rolled-back change', async () => {
      const seed = await seedBillingSite(storage(), 'note-roll');
      const sub = await subscription(storage(), seed);
      const note = await storage().transaction((tx) => tx.notes.insert(noteFixture(sub)));
      (note as { body: string }).body = 'mutated';
      note.createdAt.setTime(0);
      const abort = new Abort('abort');
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.notes.update(seed.site.id, note.id, { body: 'uncommitted', sticky: true });
          await tx.notes.insert(noteFixture(sub, { body: 'uncommitted insert' }));
          assert.equal(await tx.notes.delete(seed.site.id, note.id), true);
          throw abort;
        }),
        (error: unknown) => error === abort,
      );
      const notes = await storage().transaction((tx) => tx.notes.listForSubscription(seed.site.id, sub.id));
      assert.deepEqual(notes, [{ ...noteFixture(sub), id: note.id }]);
    });
  });
}
