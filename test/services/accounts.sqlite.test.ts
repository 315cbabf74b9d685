import { sqliteHarness } from '../support/sqlite.js';
import { accountsSuite } from './accounts.suite.js';

accountsSuite(sqliteHarness);
