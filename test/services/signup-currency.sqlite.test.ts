import { sqliteHarness } from '../support/sqlite.js';
import { signupCurrencySuite } from './signup-currency.suite.js';

signupCurrencySuite(sqliteHarness);
