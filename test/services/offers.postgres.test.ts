import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { offersSuite } from './offers.suite.js';

afterAll(closePostgresTestServer);
offersSuite(postgresHarness());
