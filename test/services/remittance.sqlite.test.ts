import { sqliteHarness } from '../support/sqlite.js';
import { remittanceSuite } from './remittance.suite.js';

remittanceSuite(sqliteHarness);
