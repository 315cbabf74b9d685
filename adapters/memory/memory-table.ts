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

/** Deep copy that keeps Dates as Dates (structuredClone does). */
export function copy<T>(value: T): T {
  return structuredClone(value);
}

/** One table of records keyed by a numeric id, with an id sequence. */
export class MemoryTable<T extends { readonly id: number }> {
  readonly #rows = new Map<number, T>();
  #sequence = 0;

  /** The next id; sequences are not rolled back, as in SQL databases. */
  nextId(): number {
    this.#sequence += 1;
    return this.#sequence;
  }

  /** Inserts a row (its id must be unused). */
  insert(journal: Journal, row: T): T {
    const stored = copy(row);
    this.#rows.set(stored.id, stored);
    journal.push(() => this.#rows.delete(stored.id));
    return copy(stored);
  }

  /** Replaces a row by id; returns the new row, or undefined when absent. */
  replace(journal: Journal, row: T): T | undefined {
    const previous = this.#rows.get(row.id);
    if (previous === undefined) return undefined;
    const stored = copy(row);
    this.#rows.set(row.id, stored);
    journal.push(() => this.#rows.set(row.id, previous));
    return copy(stored);
  }

  /** Deletes a row by id; returns whether it existed. */
  delete(journal: Journal, id: number): boolean {
    const previous = this.#rows.get(id);
    if (previous === undefined) return false;
    this.#rows.delete(id);
    journal.push(() => this.#rows.set(id, previous));
    return true;
  }

  /** Deletes every row matching `predicate`; returns how many. */
  deleteWhere(journal: Journal, predicate: (row: T) => boolean): number {
    let count = 0;
    for (const row of [...this.#rows.values()]) {
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
    for (const row of this.#rows.values()) if (predicate(row)) return copy(row);
    return undefined;
  }

  /** Copies of every row matching `predicate`, in id (insertion) order. */
  filter(predicate: (row: T) => boolean): T[] {
    const out: T[] = [];
    for (const row of this.#rows.values()) if (predicate(row)) out.push(copy(row));
    return out;
  }

  /** Counts rows matching `predicate` without copying. */
  count(predicate: (row: T) => boolean): number {
    let n = 0;
    for (const row of this.#rows.values()) if (predicate(row)) n += 1;
    return n;
  }

  /** Iterates stored rows without copying: for internal scans only. */
  scan(): IterableIterator<T> {
    return this.#rows.values();
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
