import { sqliteHarness } from '../support/sqlite.js';
import { mailSuite } from './mail.suite.js';

mailSuite(sqliteHarness);
