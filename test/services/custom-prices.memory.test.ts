import { memoryHarness } from '../support/storages.js';
import { customPricesSuite } from './custom-prices.suite.js';

customPricesSuite(memoryHarness);
