import { memoryHarness } from '../support/storages.js';
import { advanceInvoiceSuite } from './advance-invoices.suite.js';

advanceInvoiceSuite(memoryHarness);
