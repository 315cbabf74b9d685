import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { sitesSuite } from './sites.suite.js';

afterAll(closePostgresTestServer);
sitesSuite(postgresHarness());
