import { sqliteHarness } from '../support/sqlite.js';
import { offersSuite } from './offers.suite.js';

offersSuite(sqliteHarness);
