import { sqliteHarness } from '../support/sqlite.js';
import { mrrMovementsSuite } from './mrr-movements.suite.js';

mrrMovementsSuite(sqliteHarness);
