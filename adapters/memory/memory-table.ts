import { copy } from '../copy-record.js';

// Records go in and out through `copy` (shared with the SQL adapters' read cache).
export { copy };

/**
 * A journaled in-memory table: every change records how to undo itself in the transaction's
 * journal, so a transaction that throws leaves no trace. Records go in and come out as deep
 * copies, so no caller can change stored state by mutating an object it was handed.
 */
export class Journal {
  readonly #undo: (() => void)[] = [];

  /** Records how to reverse one change. */
  push(undo: () => void): void {
    this.#undo.push(undo);
  }

  /** Reverses every recorded change, newest first. */
  rollback(): void {
    for (let i = this.#undo.length - 1; i >= 0; i--) this.#undo[i]!();
    this.#undo.length = 0;
  }
}

/**
 * A secondary index of a table: for each key, the ids of the rows that have it. The table keeps
 * it up to date on every change and every rollback, so a lookup by key (an idempotency key, a
 * due-work subject) reads a few rows instead of scanning a table that grows with every request.
 */
export class MemoryIndex<T extends { readonly id: number }> {
  readonly #keyOf: (row: T) => string;
  readonly #ids = new Map<string, Set<number>>();

  constructor(keyOf: (row: T) => string) {
    this.#keyOf = keyOf;
  }

  /** Files a stored row under its key (called by the table). */
  add(row: T): void {
    const key = this.#keyOf(row);
    let ids = this.#ids.get(key);
    if (ids === undefined) {
      ids = new Set();
      this.#ids.set(key, ids);
    }
    ids.add(row.id);
  }

  /** Takes a stored row out of its key (called by the table). */
  remove(row: T): void {
    const key = this.#keyOf(row);
    const ids = this.#ids.get(key);
    if (ids === undefined) return;
    ids.delete(row.id);
    if (ids.size === 0) this.#ids.delete(key);
  }

  /** The ids filed under `key`, ascending. */
  ids(key: string): number[] {
    const ids = this.#ids.get(key);
    if (ids === undefined) return [];
    const out = [...ids];
    // Usually in order already (ids grow); a rolled-back delete files its row again at the end.
    for (let i = 1; i < out.length; i++) {
      if (out[i - 1]! > out[i]!) {
        out.sort((a, b) => a - b);
        break;
      }
    }
    return out;
  }
}

/** One table of records keyed by a numeric id, with an id sequence and optional secondary indexes. */
export class MemoryTable<T extends { readonly id: number }> {
  readonly #rows = new Map<number, T>();
  readonly #indexes: MemoryIndex<T>[] = [];
  #sequence = 0;
  /**
   * Set when a rolled-back delete put a row back: a Map keeps insertion order, so the row now
   * sits after rows with higher ids, and scans promise id order (a page read after an id would
   * skip it). The next scan puts the rows back in id order; rollbacks of deletes are rare.
   */
  #outOfOrder = false;

  /** The next id; sequences are not rolled back, as in SQL databases. */
  nextId(): number {
    this.#sequence += 1;
    return this.#sequence;
  }

  /**
   * Adds a secondary index on `keyOf` (a string made of the fields looked up, site id included).
   * Lookups through it still check their predicate on every row, so the key only narrows.
   */
  index(keyOf: (row: T) => string): MemoryIndex<T> {
    const index = new MemoryIndex(keyOf);
    for (const row of this.#rows.values()) index.add(row);
    this.#indexes.push(index);
    return index;
  }

  // Every change of #rows goes through #put and #drop, rollbacks included, so indexes never lag.
  #put(row: T): void {
    const previous = this.#rows.get(row.id);
    if (previous !== undefined) for (const index of this.#indexes) index.remove(previous);
    this.#rows.set(row.id, row);
    for (const index of this.#indexes) index.add(row);
  }

  #drop(id: number): void {
    const previous = this.#rows.get(id);
    if (previous === undefined) return;
    for (const index of this.#indexes) index.remove(previous);
    this.#rows.delete(id);
  }

  /** Inserts a row (its id must be unused). */
  insert(journal: Journal, row: T): T {
    const stored = copy(row);
    this.#put(stored);
    journal.push(() => this.#drop(stored.id));
    return copy(stored);
  }

  /** Replaces a row by id; returns the new row, or undefined when absent. */
  replace(journal: Journal, row: T): T | undefined {
    const previous = this.#rows.get(row.id);
    if (previous === undefined) return undefined;
    const stored = copy(row);
    this.#put(stored);
    journal.push(() => this.#put(previous));
    return copy(stored);
  }

  /** Deletes a row by id; returns whether it existed. */
  delete(journal: Journal, id: number): boolean {
    const previous = this.#rows.get(id);
    if (previous === undefined) return false;
    this.#drop(id);
    journal.push(() => {
      this.#put(previous);
      this.#outOfOrder = true;
    });
    return true;
  }

  /** The stored rows in id order (re-sorting them first after a rolled-back delete). */
  #ordered(): IterableIterator<T> {
    if (this.#outOfOrder) {
      const rows = [...this.#rows.values()].sort((a, b) => a.id - b.id);
      this.#rows.clear();
      for (const row of rows) this.#rows.set(row.id, row);
      this.#outOfOrder = false;
    }
    return this.#rows.values();
  }

  /** Deletes every row matching `predicate`; returns how many. */
  deleteWhere(journal: Journal, predicate: (row: T) => boolean): number {
    let count = 0;
    for (const row of [...this.#ordered()]) {
      if (predicate(row)) {
        this.delete(journal, row.id);
        count += 1;
      }
    }
    return count;
  }

  /** A copy of the row with this id, or undefined. */
  get(id: number): T | undefined {
    const row = this.#rows.get(id);
    return row === undefined ? undefined : copy(row);
  }

  /** The stored row without copying: for predicates only, never hand it out. */
  peek(id: number): T | undefined {
    return this.#rows.get(id);
  }

  /** Copies of the first row matching `predicate` in id order, or undefined. */
  find(predicate: (row: T) => boolean): T | undefined {
    for (const row of this.#ordered()) if (predicate(row)) return copy(row);
    return undefined;
  }

  /** Copies of every row matching `predicate`, in id (insertion) order. */
  filter(predicate: (row: T) => boolean): T[] {
    const out: T[] = [];
    for (const row of this.#ordered()) if (predicate(row)) out.push(copy(row));
    return out;
  }

  /** Copies of the rows filed under `key` in `index` that match `predicate`, in id order. */
  filterIndexed(index: MemoryIndex<T>, key: string, predicate: (row: T) => boolean): T[] {
    const out: T[] = [];
    for (const id of index.ids(key)) {
      const row = this.#rows.get(id);
      if (row !== undefined && predicate(row)) out.push(copy(row));
    }
    return out;
  }

  /** A copy of the first row (in id order) filed under `key` in `index` that matches `predicate`, or undefined. */
  findIndexed(index: MemoryIndex<T>, key: string, predicate: (row: T) => boolean): T | undefined {
    for (const id of index.ids(key)) {
      const row = this.#rows.get(id);
      if (row !== undefined && predicate(row)) return copy(row);
    }
    return undefined;
  }

  /** Counts rows filed under `key` in `index` that match `predicate`, without copying. */
  countIndexed(index: MemoryIndex<T>, key: string, predicate: (row: T) => boolean): number {
    let n = 0;
    for (const id of index.ids(key)) {
      const row = this.#rows.get(id);
      if (row !== undefined && predicate(row)) n += 1;
    }
    return n;
  }

  /** Counts rows matching `predicate` without copying. */
  count(predicate: (row: T) => boolean): number {
    let n = 0;
    for (const row of this.#rows.values()) if (predicate(row)) n += 1;
    return n;
  }

  /** Iterates stored rows in id order without copying: for internal scans only. */
  scan(): IterableIterator<T> {
    return this.#ordered();
  }
}

/** A promise-chain mutex: one holder at a time, FIFO. */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();

  /** Runs `work` when every earlier holder has finished. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(work);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
