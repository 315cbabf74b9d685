import { sqliteHarness } from '../support/sqlite.js';
import { renewalCancelInFlightSuite } from './renewal-cancel-in-flight.suite.js';

renewalCancelInFlightSuite(sqliteHarness);
