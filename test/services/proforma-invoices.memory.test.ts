import { memoryHarness } from '../support/storages.js';
import { proformaInvoicesSuite } from './proforma-invoices.suite.js';

proformaInvoicesSuite(memoryHarness);
