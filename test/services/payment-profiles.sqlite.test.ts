import { sqliteHarness } from '../support/sqlite.js';
import { paymentProfilesSuite } from './payment-profiles.suite.js';

paymentProfilesSuite(sqliteHarness);
