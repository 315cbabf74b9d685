/**
 * Whether `runDue` keeps anything per renewal (issue 6): the heap in use after a forced GC, before
 * and after renewing `count` due subscriptions on a SQLite file. Section 2's peak-heap figure counts
 * garbage not yet collected, so it moves with the GC's timing; this one does not. Not part of
 * `npm run bench`; run it by hand with two counts and compare:
 *
 *   node --expose-gc --import tsx bench/heap-check.ts 2000
 *   node --expose-gc --import tsx bench/heap-check.ts 8000
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { RENEWAL_UNTIL, seedDueSubscriptions, seedSite } from './seed-subscriptions.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('Run with node --expose-gc (see the comment at the top).');
const count = Number(process.argv[2] ?? 3000);
const file = join(mkdtempSync(join(tmpdir(), 'heap-check-')), 'renewals.db');
const gateway = createTestGateway();
const seeding = createSqliteStorage({ database: file });
await seeding.migrate();
const site = await seedSite(seeding, gateway, 'bench-renewals');
await seedDueSubscriptions(seeding, site, { count, withRenewalWork: true });
await seeding.close();

const storage = createSqliteStorage({ database: file });
const engine = createBillingEngine({ storage, gateway, clock: new ManualClock(RENEWAL_UNTIL) });
gc();
const before = process.memoryUsage().heapUsed;
let renewed = 0;
for (;;) {
  const summary = await engine.runDue({ until: RENEWAL_UNTIL, limit: 100 });
  if (summary.processed === 0) break;
  renewed += summary.renewed;
}
gc();
const after = process.memoryUsage().heapUsed;
console.log(`renewed ${renewed}: heap retained after a forced GC ${((after - before) / 1_048_576).toFixed(1)} MiB`);
await storage.close();
