import { sqliteHarness } from '../support/sqlite.js';
import { signupTimingSuite } from './signup-timing.suite.js';

signupTimingSuite(sqliteHarness);
