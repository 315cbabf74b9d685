import { sqliteHarness } from '../support/sqlite.js';
import { subscriptionLeftoversSuite } from './subscription-leftovers.suite.js';

subscriptionLeftoversSuite(sqliteHarness);
