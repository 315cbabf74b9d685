import { sqliteHarness } from '../support/sqlite.js';
import { invoiceScenarios } from './invoices.suite.js';

invoiceScenarios(sqliteHarness);
