import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { catalogSuite } from './catalog.suite.js';

afterAll(closePostgresTestServer);
catalogSuite(postgresHarness());
