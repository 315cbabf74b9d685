import { sqliteHarness } from '../support/sqlite.js';
import { componentPricePointsSuite } from './component-price-points.suite.js';

componentPricePointsSuite(sqliteHarness);
