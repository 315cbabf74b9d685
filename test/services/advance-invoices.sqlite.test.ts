import { sqliteHarness } from '../support/sqlite.js';
import { advanceInvoiceSuite } from './advance-invoices.suite.js';

advanceInvoiceSuite(sqliteHarness);
