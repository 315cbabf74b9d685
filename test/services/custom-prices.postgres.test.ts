import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { customPricesSuite } from './custom-prices.suite.js';

afterAll(closePostgresTestServer);
customPricesSuite(postgresHarness());
