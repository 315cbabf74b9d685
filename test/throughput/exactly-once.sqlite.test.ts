import { fileStorage, tempDir } from '../support/sqlite.js';
import { exactlyOnceSuite } from './exactly-once.suite.js';

exactlyOnceSuite({
  name: 'sqlite',
  async create() {
    const dir = tempDir('billing-throughput-');
    const file = dir.file('shared.db');
    return {
      open: () => fileStorage(file),
      async dispose() {
        dir.dispose();
      },
    };
  },
});
