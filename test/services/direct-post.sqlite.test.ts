import { sqliteHarness } from '../support/sqlite.js';
import { directPostSuite } from './direct-post.suite.js';

directPostSuite(sqliteHarness);
