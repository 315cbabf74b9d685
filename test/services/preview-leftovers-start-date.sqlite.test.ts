import { sqliteHarness } from '../support/sqlite.js';
import { previewLeftoversStartDateSuite } from './preview-leftovers-start-date.suite.js';

previewLeftoversStartDateSuite(sqliteHarness);
