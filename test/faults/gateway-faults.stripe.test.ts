/**
 * The gateway-faults book once more with the Stripe gateway over the fake Stripe (the faults
 * decided by key in `stripe-faults.ts`), on SQLite; the control run bills the same book without
 * faults through the same gateway on the memory adapter.
 */
import { sqliteHarness } from '../support/sqlite.js';
import { gatewayFaultsSuite } from './gateway-faults.suite.js';
import { stripeGatewayKind } from './stripe-faults.js';

gatewayFaultsSuite(sqliteHarness, stripeGatewayKind);
