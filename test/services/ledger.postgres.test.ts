import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { ledgerSuite } from './ledger.suite.js';

afterAll(closePostgresTestServer);
ledgerSuite(postgresHarness());
