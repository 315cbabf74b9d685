import { copy } from '../../copy-record.js';

/**
 * A read-through cache of one transaction's repository (issue 18): a renewal step asks for its
 * site several times, and the command batcher runs many steps in one transaction, so the rows
 * that a step only reads are fetched once per transaction instead of once per question.
 *
 * It is sound because each repository is built per transaction (see `sql-storage.ts`): reusing
 * a row read earlier in the same transaction is what a longer-held snapshot would give, and every
 * write through the repository forgets what it cached. A retried transaction gets a new repository,
 * so nothing survives a rollback. Like every read, each answer is the caller's own copy (the
 * storage contract: changing a returned record changes nothing stored, nor the next answer).
 */
export class ReadCache<V> {
  readonly #entries = new Map<string, Promise<V | undefined>>();

  /** A copy of the cached value of `key`, loading (and caching) it on first use. */
  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      const loading = load();
      entry = loading;
      this.#entries.set(key, loading);
      // Neither a failed read nor "not found" is kept (the row may be written later in the same
      // transaction, by this repository or another): the next caller asks the database again.
      const forget = () => {
        if (this.#entries.get(key) === loading) this.#entries.delete(key);
      };
      loading.then((value) => value === undefined && forget(), forget);
    }
    const value = await entry;
    return value === undefined ? undefined : copy(value);
  }

  /** Caches `value` under `key` (a row found one way is also the answer another way). */
  put(key: string, value: V): void {
    this.#entries.set(key, Promise.resolve(copy(value)));
  }

  /** Forgets everything (after any write of the table). */
  clear(): void {
    this.#entries.clear();
  }
}

/**
 * The read caches of one transaction shared between repositories, by table: a table written by
 * more than one repository (products: the catalog and the price points) is cached in one place,
 * which each writer clears.
 */
export class TransactionCaches {
  readonly #byTable = new Map<string, ReadCache<unknown>>();

  /** Forgets every table's cache (a site deleted: its rows went with it, by cascade). */
  clearAll(): void {
    for (const cache of this.#byTable.values()) cache.clear();
  }

  /** The cache of `table` in this transaction. */
  of<V>(table: string): ReadCache<V> {
    let cache = this.#byTable.get(table);
    if (cache === undefined) {
      cache = new ReadCache<unknown>();
      this.#byTable.set(table, cache);
    }
    return cache as ReadCache<V>;
  }
}
