import { memoryHarness } from '../support/storages.js';
import { subscriptionReferencesSuite } from './subscription-references.suite.js';

subscriptionReferencesSuite(memoryHarness);
