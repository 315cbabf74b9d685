import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { mrrMovementsSuite } from './mrr-movements.suite.js';

afterAll(closePostgresTestServer);
mrrMovementsSuite(postgresHarness());
