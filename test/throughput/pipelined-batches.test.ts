/**
 * Pipelined batches (issue 18): on a storage whose connection pipelines (Postgres over a `pg` pool
 * made with `pipeline: true`), the commands of one batch run at once in their shared transaction,
 * so that a round trip carries a statement of each. Their events still reach the outbox in batch
 * order, a failing command still fails alone, no command is still running when the transaction
 * ends, and a statement that needs a savepoint refuses to run beside others and runs again alone.
 */
import {
  BillingError,
  DEFAULT_SITE_SETTINGS,
  ManualClock,
  type Storage,
  type StorageTransaction,
  type TransactionOptions,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { CommandBatcher, type CommandContext } from '../../src/services/command-runner.js';
import {
  closePostgresTestServer,
  ON_PGLITE,
  PGLITE_SKIP_REASON,
  postgresTestServer,
  schemaStorage,
  testPool,
} from '../support/postgres.js';

afterAll(closePostgresTestServer);

const AT = new Date('2026-05-01T00:00:00.000Z');

function siteFields(subdomain: string) {
  return {
    subdomain,
    name: subdomain,
    currency: 'USD',
    timeZone: 'UTC',
    dateFormat: 'YYYY-MM-DD',
    timeFormat: 'HH:mm:ss',
    mode: 'test' as const,
    sharedKey: `${subdomain}-key`,
    settings: DEFAULT_SITE_SETTINGS,
    createdAt: AT,
    updatedAt: AT,
  };
}

function customerFields(siteId: number, reference: string) {
  return {
    siteId,
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: `${reference}@example.com`,
    reference,
    organization: null,
    phone: null,
    address: { address: null, address2: null, city: null, state: null, zip: null, country: null },
    createdAt: AT,
    updatedAt: AT,
  };
}

/**
 * A memory storage that says it pipelines, and reports each transaction's options and whether it
 * is still open (the memory adapter itself runs one transaction at a time; only the batcher's
 * side is under test here).
 */
async function pipelinedMemory(): Promise<{
  storage: Storage;
  siteId: number;
  options: (TransactionOptions | undefined)[];
  open: () => boolean;
}> {
  const inner = createMemoryStorage();
  const options: (TransactionOptions | undefined)[] = [];
  let openCount = 0;
  const storage: Storage = {
    capabilities: { ...inner.capabilities, pipelining: true },
    migrate: () => inner.migrate(),
    close: () => inner.close(),
    async transaction(work, txOptions) {
      options.push(txOptions);
      return inner.transaction(async (tx) => {
        openCount += 1;
        try {
          return await work(tx);
        } finally {
          openCount -= 1;
        }
      }, txOptions);
    },
  };
  await storage.migrate();
  const site = await storage.transaction((tx) => tx.sites.insert(siteFields('pipelined')));
  options.length = 0;
  return { storage, siteId: site.id, options, open: () => openCount > 0 };
}

/** Resolves on the next turn of the event loop. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('CommandBatcher on a pipelining storage', () => {
  it('runs the commands of a batch at once, and appends their events in batch order', async () => {
    const { storage, siteId, options } = await pipelinedMemory();
    const batcher = new CommandBatcher({ storage, clock: new ManualClock(AT), emitter: { emit() {} } });
    // A batch of one first (nothing is in flight yet); the four below queue behind it and form the next.
    const blocker = batcher.run(AT, async () => {
      await nextTurn();
      return 'blocker';
    });
    // The first command finishes only after the second has started: run one after another, that
    // batch would never end.
    let signalSecond!: () => void;
    const secondStarted = new Promise<void>((resolve) => {
      signalSecond = resolve;
    });
    const first = batcher.run(AT, async (ctx) => {
      await secondStarted;
      await nextTurn();
      ctx.record({ siteId, key: 'renewal_success', subjectType: 'subscription', subjectId: 1, payload: {} });
      return 'first';
    });
    const second = batcher.run(AT, async (ctx) => {
      signalSecond();
      ctx.record({ siteId, key: 'renewal_success', subjectType: 'subscription', subjectId: 2, payload: {} });
      return 'second';
    });
    const third = batcher.run(AT, async (ctx) => {
      ctx.record({ siteId, key: 'renewal_success', subjectType: 'subscription', subjectId: 3, payload: {} });
      return 'third';
    });
    expect(await Promise.all([blocker, first, second, third])).toEqual(['blocker', 'first', 'second', 'third']);
    const events = await storage.transaction((tx) => tx.outbox.listAfter(siteId, 0, 10));
    // Each batch in submission order, whichever command of it recorded first.
    expect(events.map((event) => event.subjectId)).toEqual([1, 2, 3]);
    // A batch of several commands says so; a batch of one does not.
    expect(options.slice(0, 2).map((o) => o?.concurrentCommands === true)).toEqual([false, true]);
  });

  it('runs a batch one command after another on a storage that does not pipeline', async () => {
    const inner = createMemoryStorage();
    const seen: (TransactionOptions | undefined)[] = [];
    const storage: Storage = {
      capabilities: inner.capabilities,
      migrate: () => inner.migrate(),
      close: () => inner.close(),
      transaction(work, txOptions) {
        seen.push(txOptions);
        return inner.transaction(work, txOptions);
      },
    };
    await storage.migrate();
    const batcher = new CommandBatcher({ storage, clock: new ManualClock(AT), emitter: { emit() {} } });
    const order: string[] = [];
    const step = (name: string) => async () => {
      order.push(`${name} starts`);
      await nextTurn();
      order.push(`${name} ends`);
      return name;
    };
    await Promise.all([batcher.run(AT, step('a')), batcher.run(AT, step('b')), batcher.run(AT, step('c'))]);
    expect(order).toEqual(['a starts', 'a ends', 'b starts', 'b ends', 'c starts', 'c ends']);
    expect(seen.every((o) => o?.concurrentCommands !== true)).toBe(true);
  });

  it('lets every command of a failing batch finish before the transaction ends, then fails the failing one alone', async () => {
    const { storage, siteId, open } = await pipelinedMemory();
    const batcher = new CommandBatcher({ storage, clock: new ManualClock(AT), emitter: { emit() {} } });
    const slowSawOpen: boolean[] = [];
    let failed = false;
    const blocker = batcher.run(AT, async () => 'blocker');
    const slow = batcher.run(AT, async (ctx: CommandContext) => {
      // Still working after its batch-mate failed: the transaction must still be open meanwhile.
      for (let turn = 0; turn < 5; turn++) {
        await nextTurn();
        slowSawOpen.push(open());
      }
      await ctx.tx.dueWork.schedule({ siteId, kind: 'notice', subjectId: 7, dueAt: ctx.now, uniqueKey: 'slow:7' });
      return 'slow';
    });
    const failing = batcher.run(AT, async () => {
      failed = true;
      throw new BillingError('conflict', 'This command fails.');
    });
    await expect(failing).rejects.toMatchObject({ code: 'conflict' });
    expect(await Promise.all([blocker, slow])).toEqual(['blocker', 'slow']);
    expect(failed).toBe(true);
    // The slow command ran twice (in the failed batch, then alone), each time inside its transaction.
    expect(slowSawOpen).toHaveLength(10);
    expect(slowSawOpen.every(Boolean)).toBe(true);
    const row = await storage.transaction((tx) => tx.dueWork.findByKey(siteId, 'slow:7'));
    expect(row?.status).toBe('pending');
  });
});

describe.skipIf(ON_PGLITE)('Postgres with pipelined clients', () => {
  if (ON_PGLITE) console.info(`pipelined-batches (Postgres): skipped: ${PGLITE_SKIP_REASON}`);

  it('reports pipelining for a pool made with pipeline: true, and not otherwise', async () => {
    const server = await postgresTestServer();
    const schema = await server.freshSchema();
    const pipelined = testPool(server, schema, { pipeline: true } as never);
    const plain = testPool(server, schema, { pipeline: false } as never);
    const a = createPostgresStorage({ pool: pipelined, schema: null });
    const b = createPostgresStorage({ pool: plain, schema: null });
    const c = createPostgresStorage({ pool: { connect: () => plain.connect(), end: async () => {} }, schema: null });
    try {
      expect(a.capabilities.pipelining).toBe(true);
      expect(b.capabilities.pipelining).toBe(false);
      // A wrapper hides the pool's options: false unless the caller says otherwise.
      expect(c.capabilities.pipelining).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('answers statements issued at once in one transaction, each with its own rows', async () => {
    const server = await postgresTestServer();
    const { storage } = await schemaStorage(server, await server.freshSchema());
    try {
      expect(storage.capabilities.pipelining).toBe(true);
      const ids = await storage.transaction(async (tx) => {
        const sites = await Promise.all(Array.from({ length: 12 }, (_, n) => tx.sites.insert(siteFields(`pipe-${n}`))));
        return sites.map((site) => site.id);
      });
      const read = await storage.transaction((tx) =>
        Promise.all(ids.map(async (id) => (await tx.sites.findById(id))?.subdomain)),
      );
      expect(read).toEqual(ids.map((_, n) => `pipe-${n}`));
    } finally {
      await storage.close();
    }
  });

  it('refuses a savepoint beside other commands without dooming the transaction, and the batch runs it again alone', async () => {
    const server = await postgresTestServer();
    const { storage } = await schemaStorage(server, await server.freshSchema());
    try {
      const { siteId, taken, other, third } = await storage.transaction(async (tx) => {
        const site = await tx.sites.insert(siteFields('savepoint'));
        const first = await tx.customers.insert(customerFields(site.id, 'taken'));
        const second = await tx.customers.insert(customerFields(site.id, 'other'));
        // Its own row: run alone, its update and the conflicting one must not race for one version.
        const last = await tx.customers.insert(customerFields(site.id, 'third'));
        return { siteId: site.id, taken: first, other: second, third: last };
      });
      expect(taken.reference).toBe('taken');

      // Directly: refused before it runs, and the transaction still commits what else it did.
      const refusal = await storage.transaction(
        async (tx: StorageTransaction) => {
          const error = await tx.customers
            .updateAtVersion(siteId, other.id, other.version, { reference: 'fresh' })
            .then(
              () => undefined,
              (caught: unknown) => caught,
            );
          await tx.dueWork.schedule({ siteId, kind: 'notice', subjectId: 1, dueAt: AT, uniqueKey: 'after-refusal' });
          return error;
        },
        { concurrentCommands: true },
      );
      expect(refusal).toBeInstanceOf(BillingError);
      expect((refusal as BillingError).code).toBe('storage');
      expect((refusal as BillingError).data).toMatchObject({ needsOwnTransaction: true });
      const kept = await storage.transaction((tx) => tx.dueWork.findByKey(siteId, 'after-refusal'));
      expect(kept?.status).toBe('pending');

      // Through the batcher: the conflicting command gets its own answer, its batch-mates commit.
      const batcher = new CommandBatcher({ storage, clock: new ManualClock(AT), emitter: { emit() {} } });
      const schedule = (n: number) => (ctx: CommandContext) =>
        ctx.tx.dueWork.schedule({ siteId, kind: 'notice', subjectId: n, dueAt: ctx.now, uniqueKey: `mate:${n}` });
      const lead = batcher.run(AT, schedule(1));
      const mates = [2, 3].map((n) => batcher.run(AT, schedule(n)));
      const conflicting = batcher.run(AT, (ctx) =>
        ctx.tx.customers.updateAtVersion(siteId, other.id, other.version, { reference: 'taken' }),
      );
      const renamed = batcher.run(AT, (ctx) =>
        ctx.tx.customers.updateAtVersion(siteId, third.id, third.version, { reference: 'renamed' }),
      );
      await expect(conflicting).rejects.toMatchObject({ code: 'conflict' });
      await Promise.all([lead, ...mates]);
      expect((await renamed)?.reference).toBe('renamed');
      const rows = await storage.transaction((tx) =>
        Promise.all([1, 2, 3].map((n) => tx.dueWork.findByKey(siteId, `mate:${n}`))),
      );
      expect(rows.map((row) => row?.status)).toEqual(['pending', 'pending', 'pending']);
    } finally {
      await storage.close();
    }
  });
});
