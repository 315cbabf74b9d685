import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { currencyPricesSuite } from './currency-prices.suite.js';

afterAll(closePostgresTestServer);
currencyPricesSuite(postgresHarness());
