import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { accountsSuite } from './accounts.suite.js';

afterAll(closePostgresTestServer);
accountsSuite(postgresHarness());
