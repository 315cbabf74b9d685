import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { pricePointsSuite } from './price-points.suite.js';

afterAll(closePostgresTestServer);
pricePointsSuite(postgresHarness());
