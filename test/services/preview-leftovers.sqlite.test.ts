import { sqliteHarness } from '../support/sqlite.js';
import { previewLeftoversSuite } from './preview-leftovers.suite.js';

previewLeftoversSuite(sqliteHarness);
