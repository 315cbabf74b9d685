import type { Storage } from 'billing-engine';
import { raceCases } from '../support/race-cases.js';
import { fileStorage, tempDir } from '../support/sqlite.js';

raceCases({
  name: 'sqlite',
  async open() {
    const dir = tempDir();
    const file = dir.file('race.sqlite');
    const opened: Storage[] = [];
    // Each storage opens its own connection to the shared file.
    const openOne = async () => {
      const storage = await fileStorage(file, { busyTimeoutMs: 30_000 });
      opened.push(storage);
      return storage;
    };
    const seed = await openOne();
    return {
      seed,
      location: { dialect: 'sqlite', file },
      openStorages: (count) => Promise.all(Array.from({ length: count }, openOne)),
      async dispose() {
        for (const storage of opened) await storage.close();
        dir.dispose();
      },
    };
  },
});
