import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { reportsSuite } from './reports.suite.js';

afterAll(closePostgresTestServer);
reportsSuite(postgresHarness());
