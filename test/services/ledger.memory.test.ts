import { memoryHarness } from '../support/storages.js';
import { ledgerSuite } from './ledger.suite.js';

ledgerSuite(memoryHarness);
