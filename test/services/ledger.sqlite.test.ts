import { sqliteHarness } from '../support/sqlite.js';
import { ledgerSuite } from './ledger.suite.js';

ledgerSuite(sqliteHarness);
