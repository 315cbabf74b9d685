import { memoryHarness } from '../support/storages.js';
import { componentPricePointsSuite } from './component-price-points.suite.js';

componentPricePointsSuite(memoryHarness);
