import { sqliteHarness } from '../support/sqlite.js';
import { apiBreadthSuite } from './api-breadth.suite.js';

apiBreadthSuite(sqliteHarness);
