import { sqliteHarness } from '../support/sqlite.js';
import { sitesSuite } from './sites.suite.js';

sitesSuite(sqliteHarness);
