import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { remittanceSuite } from './remittance.suite.js';

afterAll(closePostgresTestServer);
remittanceSuite(postgresHarness());
