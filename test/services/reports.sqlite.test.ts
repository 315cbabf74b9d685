import { sqliteHarness } from '../support/sqlite.js';
import { reportsSuite } from './reports.suite.js';

reportsSuite(sqliteHarness);
