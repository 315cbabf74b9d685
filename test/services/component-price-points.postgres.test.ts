import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { componentPricePointsSuite } from './component-price-points.suite.js';

afterAll(closePostgresTestServer);
componentPricePointsSuite(postgresHarness());
