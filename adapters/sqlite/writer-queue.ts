/**
 * One queue of writers per SQLite file in this process. SQLite allows one writer per file; two
 * storages of one file in one process would otherwise meet inside SQLite's busy handler, which
 * sleeps synchronously and so blocks the event loop that the lock holder needs to finish.
 */

interface Queue {
  tail: Promise<void>;
  users: number;
}

const queues = new Map<string, Queue>();

/** A handle on the shared writer queue of one file; `acquire` waits for the turn, `dispose` forgets the file when unused. */
export interface WriterQueue {
  acquire(): Promise<() => void>;
  dispose(): void;
}

/** Joins the writer queue of the file at the absolute path `file`. */
export function joinWriterQueue(file: string): WriterQueue {
  let queue = queues.get(file);
  if (queue === undefined) {
    queue = { tail: Promise.resolve(), users: 0 };
    queues.set(file, queue);
  }
  queue.users += 1;
  const shared = queue;
  let disposed = false;
  return {
    acquire() {
      let release!: () => void;
      const turn = new Promise<void>((resolve) => {
        release = resolve;
      });
      const previous = shared.tail;
      shared.tail = previous.then(() => turn);
      return previous.then(() => release);
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      shared.users -= 1;
      if (shared.users === 0 && queues.get(file) === shared) queues.delete(file);
    },
  };
}
