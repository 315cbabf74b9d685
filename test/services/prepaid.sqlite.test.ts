import { sqliteHarness } from '../support/sqlite.js';
import { prepaidSuite } from './prepaid.suite.js';

prepaidSuite(sqliteHarness);
