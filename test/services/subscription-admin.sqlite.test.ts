import { sqliteHarness } from '../support/sqlite.js';
import { subscriptionAdminSuite } from './subscription-admin.suite.js';

subscriptionAdminSuite(sqliteHarness);
