// Imports the built package by name, as an ESM consumer would; prints what it found.
import { BillingError, createBillingEngine } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { customerRequest, parseWireRequest } from 'billing-engine/chargify';
import { ManualClock, runStorageConformance } from 'billing-engine/testing';

const engine = createBillingEngine({ storage: createMemoryStorage(), clock: new ManualClock('2026-01-01T00:00:00Z') });
const created = await engine.sites.create({ subdomain: 'esm', currency: 'USD' });
let sameErrorClass = false;
try {
  await engine.authenticate('esm', 'wrong');
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
