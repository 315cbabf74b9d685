import { sqliteHarness } from '../support/sqlite.js';
import { catalogSuite } from './catalog.suite.js';

catalogSuite(sqliteHarness);
