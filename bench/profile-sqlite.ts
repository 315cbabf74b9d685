/**
 * Renewals per second and CPU per renewal of `runDue` on a SQLite file with the instant test
 * gateway, for A/B comparisons of two checkouts (issue 18). Not part of `npm run bench`; run it by
 * hand, alternating the checkouts compared, on an idle machine:
 *
 *   npx tsx bench/profile-sqlite.ts [count]
 *
 * `LIMIT=100` renews through `runDue({ limit })` calls of that size (the bench's time-boxed way);
 * by default one call renews everything. Add `--cpu-prof` (node --cpu-prof --import tsx ...) for
 * a profile.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { RENEWAL_UNTIL, seedDueSubscriptions, seedSite } from './seed-subscriptions.js';

const count = Number(process.argv[2] ?? 3000);
const file = join(mkdtempSync(join(tmpdir(), 'profile-sqlite-')), 'renewals.db');
const gateway = createTestGateway();
const seeding = createSqliteStorage({ database: file });
await seeding.migrate();
const site = await seedSite(seeding, gateway, 'bench-renewals');
await seedDueSubscriptions(seeding, site, { count, withRenewalWork: true });
await seeding.close();

const storage = createSqliteStorage({ database: file });
const engine = createBillingEngine({ storage, gateway, clock: new ManualClock(RENEWAL_UNTIL) });
const limit = process.env.LIMIT ? { limit: Number(process.env.LIMIT) } : {};
const start = performance.now();
const cpuBefore = process.cpuUsage();
let renewed = 0;
for (;;) {
  const summary = await engine.runDue({ until: RENEWAL_UNTIL, ...limit });
  renewed += summary.renewed;
  if (summary.processed === 0 || !('limit' in limit)) break;
}
const seconds = (performance.now() - start) / 1000;
const cpu = process.cpuUsage(cpuBefore);
console.log(
  `renewed ${renewed} in ${seconds.toFixed(2)} s = ${(renewed / seconds).toFixed(0)} renewals/s; ` +
    `CPU ${((cpu.user + cpu.system) / 1000 / Math.max(1, renewed)).toFixed(3)} ms/renewal`,
);
await storage.close();
