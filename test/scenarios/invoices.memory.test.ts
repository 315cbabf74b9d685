import { memoryHarness } from '../support/storages.js';
import { invoiceScenarios } from './invoices.suite.js';

invoiceScenarios(memoryHarness);
