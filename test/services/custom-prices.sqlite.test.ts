import { sqliteHarness } from '../support/sqlite.js';
import { customPricesSuite } from './custom-prices.suite.js';

customPricesSuite(sqliteHarness);
