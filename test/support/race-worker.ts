/**
 * A child process for the multi-process race tests: opens its own storage on a shared SQLite file
 * or Postgres schema, prints `ready`, waits for `go` on stdin (so that every process starts the
 * race at once), runs one race operation and prints its result as one JSON line.
 *
 * Run: `node --import tsx test/support/race-worker.ts '<json of RaceWorkerArgs>'`.
 */
import type { Storage } from 'billing-engine';
import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import pg from 'pg';

/** What one worker is told to do. */
export type RaceWorkerArgs = (
  | { readonly dialect: 'sqlite'; readonly file: string }
  | { readonly dialect: 'postgres'; readonly url: string; readonly schema: string }
) & {
  readonly owner: string;
  readonly siteId: number;
} & (
    | { readonly op: 'claim-due'; readonly batch: number; readonly now: number }
    | { readonly op: 'claim-key'; readonly times: number; readonly now: number }
    | { readonly op: 'update-site'; readonly times: number; readonly expectedVersion: number }
  );

/** What one worker reports. */
export type RaceWorkerResult =
  | { readonly owner: string; readonly claimed: number[] }
  | { readonly owner: string; readonly wins: number };

function open(args: RaceWorkerArgs): Storage {
  if (args.dialect === 'sqlite') return createSqliteStorage({ database: args.file, busyTimeoutMs: 30_000 });
  // Pipelined clients, as the README advises (issue 18).
  const pool = new pg.Pool({
    connectionString: args.url,
    options: `-c search_path=${args.schema}`,
    max: 5,
    pipeline: true,
  } as pg.PoolConfig);
  pool.on('error', () => {});
  return createPostgresStorage({ pool, schema: null });
}

async function race(storage: Storage, args: RaceWorkerArgs): Promise<RaceWorkerResult> {
  switch (args.op) {
    case 'claim-due': {
      const now = new Date(args.now);
      const claimed: number[] = [];
      for (;;) {
        const batch = await storage.transaction((tx) =>
          tx.dueWork.claim({
            until: now,
            limit: args.batch,
            owner: args.owner,
            leaseUntil: new Date(args.now + 3_600_000),
            now,
          }),
        );
        if (batch.length === 0) return { owner: args.owner, claimed };
        claimed.push(...batch.map((row) => row.id));
      }
    }
    case 'claim-key': {
      const results = await Promise.all(
        Array.from({ length: args.times }, () =>
          storage.transaction((tx) => tx.idempotency.claim(args.siteId, 'race', 'one-key', new Date(args.now), null)),
        ),
      );
      return { owner: args.owner, wins: results.filter(Boolean).length };
    }
    case 'update-site': {
      const results = await Promise.all(
        Array.from({ length: args.times }, (_, i) =>
          storage.transaction((tx) =>
            tx.sites.updateAtVersion(args.siteId, args.expectedVersion, { name: `${args.owner}-${i}` }),
          ),
        ),
      );
      return { owner: args.owner, wins: results.filter((r) => r !== undefined).length };
    }
  }
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '') as RaceWorkerArgs;
  const storage = open(args);
  // Warm up: connect (and for SQLite, open the file) before the race starts.
  await storage.transaction((tx) => tx.sites.findById(args.siteId));
  const go = new Promise<void>((resolve) => {
    process.stdin.on('data', (chunk) => {
      if (chunk.toString().includes('go')) resolve();
    });
  });
  process.stdout.write('ready\n');
  await go;
  const result = await race(storage, args);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await storage.close();
  process.stdin.destroy();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
