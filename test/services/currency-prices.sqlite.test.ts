import { sqliteHarness } from '../support/sqlite.js';
import { currencyPricesSuite } from './currency-prices.suite.js';

currencyPricesSuite(sqliteHarness);
