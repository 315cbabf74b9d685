import { memoryHarness } from '../support/storages.js';
import { pricePointsSuite } from './price-points.suite.js';

pricePointsSuite(memoryHarness);
