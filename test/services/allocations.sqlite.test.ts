import { sqliteHarness } from '../support/sqlite.js';
import { allocationsSuite } from './allocations.suite.js';

allocationsSuite(sqliteHarness);
