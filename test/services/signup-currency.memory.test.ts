import { memoryHarness } from '../support/storages.js';
import { signupCurrencySuite } from './signup-currency.suite.js';

signupCurrencySuite(memoryHarness);
