import { sqliteHarness } from '../support/sqlite.js';
import { pricePointsSuite } from './price-points.suite.js';

pricePointsSuite(sqliteHarness);
