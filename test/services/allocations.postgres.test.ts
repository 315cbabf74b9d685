import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { allocationsSuite } from './allocations.suite.js';

afterAll(closePostgresTestServer);
allocationsSuite(postgresHarness());
