import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { subscriptionLeftoversSuite } from './subscription-leftovers.suite.js';

afterAll(closePostgresTestServer);
subscriptionLeftoversSuite(postgresHarness());
