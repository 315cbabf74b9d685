/**
 * The group commit of due work's steps (issue 18): commands submitted while a batch is committing
 * share the next transaction, each settles only once its transaction has committed, and a failing
 * command fails alone: the batch runs again without it sinking the others.
 */
import { BillingError, DEFAULT_SITE_SETTINGS, type EventKey, ManualClock, type Storage } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it } from 'vitest';
import { CommandBatcher, type CommandContext } from '../../src/services/command-runner.js';

const AT = new Date('2026-05-01T00:00:00.000Z');

/** A memory storage that counts the transactions it begins, with one site. */
async function countingStorage(): Promise<{ storage: Storage; siteId: number; transactions: () => number }> {
  const inner = createMemoryStorage();
  let count = 0;
  const storage: Storage = {
    capabilities: inner.capabilities,
    migrate: () => inner.migrate(),
    close: () => inner.close(),
    transaction(work, options) {
      count += 1;
      return inner.transaction(work, options);
    },
  };
  await storage.migrate();
  const site = await storage.transaction((tx) =>
    tx.sites.insert({
      subdomain: 'batch',
      name: 'Batch',
      currency: 'USD',
      timeZone: 'UTC',
      dateFormat: 'YYYY-MM-DD',
      timeFormat: 'HH:mm:ss',
      mode: 'test',
      sharedKey: 'batch-key',
      settings: DEFAULT_SITE_SETTINGS,
      createdAt: AT,
      updatedAt: AT,
    }),
  );
  return { storage, siteId: site.id, transactions: () => count - 1 };
}

/** A command that schedules one due-work row keyed `n` and records one event about subject `n`. */
function command(siteId: number, n: number, fail = false) {
  return async (ctx: CommandContext): Promise<number> => {
    await ctx.tx.dueWork.schedule({ siteId, kind: 'notice', subjectId: n, dueAt: ctx.now, uniqueKey: `batch:${n}` });
    ctx.record({ siteId, key: 'renewal_success', subjectType: 'subscription', subjectId: n, payload: {} });
    if (fail) throw new BillingError('conflict', `Command ${n} fails.`);
    return n;
  };
}

describe('CommandBatcher', () => {
  it('runs commands submitted while a batch commits in one transaction, each settled after its commit', async () => {
    const { storage, siteId, transactions } = await countingStorage();
    const heard: { key: EventKey; subjectId: number }[] = [];
    const batcher = new CommandBatcher(
      {
        storage,
        clock: new ManualClock(AT),
        emitter: { emit: (key, event) => heard.push({ key, subjectId: event.subjectId }) },
      },
      { maxInFlight: 1 },
    );
    const visibleAtSettle: boolean[] = [];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        batcher.run(AT, command(siteId, n)).then(async (value) => {
          // Settled only after the commit: another transaction already sees the command's row.
          const row = await storage.transaction((tx) => tx.dueWork.findByKey(siteId, `batch:${n}`));
          visibleAtSettle.push(row !== undefined);
          return value;
        }),
      ),
    );
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(visibleAtSettle).toEqual(Array(10).fill(true));
    // The first command found the batcher idle and ran alone; the nine submitted meanwhile shared one
    // transaction (the ten reads above are counted too).
    expect(transactions() - 10).toBe(2);
    expect(heard.map((e) => e.subjectId)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const outbox = await storage.transaction((tx) => tx.outbox.listAfter(siteId, 0, 100));
    expect(outbox.map((e) => e.subjectId)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('starts another batch while one commits only once enough commands wait, and never leaves one waiting', async () => {
    const { storage, siteId, transactions } = await countingStorage();
    const batcher = new CommandBatcher(
      { storage, clock: new ManualClock(AT), emitter: { emit: () => {} } },
      { maxInFlight: 4, minBatchWhileBusy: 3 },
    );
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
    const first = batcher.run(AT, async (ctx) => {
      await gate;
      return command(siteId, 0)(ctx);
    });
    await tick();
    expect(transactions()).toBe(1);
    // Two waiting while a batch commits: fewer than three, so no transaction of their own yet.
    const second = [1, 2].map((n) => batcher.run(AT, command(siteId, n)));
    await tick();
    expect(transactions()).toBe(1);
    // The third makes three: they start together.
    second.push(batcher.run(AT, command(siteId, 3)));
    await tick();
    expect(transactions()).toBe(2);
    // One more waits alone; it starts once nothing is in flight.
    const last = batcher.run(AT, command(siteId, 4));
    await tick();
    expect(transactions()).toBe(2);
    open();
    expect(await Promise.all([first, ...second, last])).toEqual([0, 1, 2, 3, 4]);
    expect(transactions()).toBe(3);
  });

  it('fails a failing command alone: the others of its batch commit, and nothing of it is written', async () => {
    const { storage, siteId } = await countingStorage();
    const heard: number[] = [];
    const batcher = new CommandBatcher(
      { storage, clock: new ManualClock(AT), emitter: { emit: (_key, event) => heard.push(event.subjectId) } },
      { maxInFlight: 1 },
    );
    const outcomes = await Promise.allSettled([0, 1, 2, 3, 4].map((n) => batcher.run(AT, command(siteId, n, n === 3))));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const failure = outcomes[3] as PromiseRejectedResult;
    expect(failure.reason).toBeInstanceOf(BillingError);
    expect((failure.reason as BillingError).message).toBe('Command 3 fails.');
    const rows = await storage.transaction(async (tx) =>
      Promise.all([0, 1, 2, 3, 4].map((n) => tx.dueWork.findByKey(siteId, `batch:${n}`))),
    );
    expect(rows.map((row) => row !== undefined)).toEqual([true, true, true, false, true]);
    expect([...heard].sort()).toEqual([0, 1, 2, 4]);
    const outbox = await storage.transaction((tx) => tx.outbox.listAfter(siteId, 0, 100));
    expect(outbox.map((e) => e.subjectId).sort()).toEqual([0, 1, 2, 4]);
  });
});
