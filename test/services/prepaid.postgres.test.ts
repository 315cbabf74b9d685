import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { prepaidSuite } from './prepaid.suite.js';

afterAll(closePostgresTestServer);
prepaidSuite(postgresHarness());
