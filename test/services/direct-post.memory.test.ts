import { memoryHarness } from '../support/storages.js';
import { directPostSuite } from './direct-post.suite.js';

directPostSuite(memoryHarness);
