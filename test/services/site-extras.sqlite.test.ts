import { sqliteHarness } from '../support/sqlite.js';
import { siteExtrasSuite } from './site-extras.suite.js';

siteExtrasSuite(sqliteHarness);
