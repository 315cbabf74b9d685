import { memoryHarness } from '../support/storages.js';
import { currencyPricesSuite } from './currency-prices.suite.js';

currencyPricesSuite(memoryHarness);
