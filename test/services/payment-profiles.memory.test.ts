import { memoryHarness } from '../support/storages.js';
import { paymentProfilesSuite } from './payment-profiles.suite.js';

paymentProfilesSuite(memoryHarness);
