// Requires the built package by name, as a CommonJS consumer would; prints what it found.
const { BillingError, createBillingEngine } = require('billing-engine');
const { customerRequest, parseWireRequest } = require('billing-engine/chargify');
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
  // The wire format's errors are the root's BillingError: one copy of the core across entries.
  let chargifySameErrorClass = false;
  try {
    parseWireRequest(customerRequest, {});
  } catch (error) {
    chargifySameErrorClass = error instanceof BillingError && error.code === 'validation';
  }
  console.log(
    JSON.stringify({
      site: created.site.subdomain,
      sameErrorClass,
      chargifySameErrorClass,
      sqlite: typeof createSqliteStorage,
      postgres: typeof createPostgresStorage,
      conformance: typeof runStorageConformance,
    }),
  );
})();
