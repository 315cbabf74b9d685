import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { siteExtrasSuite } from './site-extras.suite.js';

afterAll(closePostgresTestServer);
siteExtrasSuite(postgresHarness());
