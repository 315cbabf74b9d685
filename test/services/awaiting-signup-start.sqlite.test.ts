import { sqliteHarness } from '../support/sqlite.js';
import { awaitingSignupStartSuite } from './awaiting-signup-start.suite.js';

awaitingSignupStartSuite(sqliteHarness);
