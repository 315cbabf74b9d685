// Requires the built package by name, as a CommonJS consumer would; prints what it found.
const { BillingError, createBillingEngine } = require('billing-engine');
const { createMemoryStorage } = require('billing-engine/adapters/memory');
const { createPostgresStorage } = require('billing-engine/adapters/postgres');
const { createSqliteStorage } = require('billing-engine/adapters/sqlite');
const { ManualClock, runStorageConformance } = require('billing-engine/testing');

(async () => {
  const engine = createBillingEngine({
    storage: createMemoryStorage(),
    clock: new ManualClock('2026-01-01T00:00:00Z'),
  });
  const created = await engine.sites.create({ subdomain: 'cjs', currency: 'USD' });
  let sameErrorClass = false;
  try {
    await engine.authenticate('cjs', 'wrong');
  } catch (error) {
    sameErrorClass = error instanceof BillingError && error.code === 'unauthorized';
  }
  console.log(
    JSON.stringify({
      site: created.site.subdomain,
      sameErrorClass,
      sqlite: typeof createSqliteStorage,
      postgres: typeof createPostgresStorage,
      conformance: typeof runStorageConformance,
    }),
  );
})();
