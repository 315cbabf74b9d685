import { sqliteHarness } from '../support/sqlite.js';
import { proformaInvoicesSuite } from './proforma-invoices.suite.js';

proformaInvoicesSuite(sqliteHarness);
