import { sqliteHarness } from '../support/sqlite.js';
import { subscriptionReferencesSuite } from './subscription-references.suite.js';

subscriptionReferencesSuite(sqliteHarness);
