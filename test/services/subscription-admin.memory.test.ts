import { memoryHarness } from '../support/storages.js';
import { subscriptionAdminSuite } from './subscription-admin.suite.js';

subscriptionAdminSuite(memoryHarness);
