// Opens a SQLite file through the shipped adapter where better-sqlite3 is not installed; prints the error.
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';

try {
  createSqliteStorage({ database: 'never-created.sqlite' });
  console.log(JSON.stringify({ opened: true }));
} catch (error) {
  console.log(JSON.stringify({ code: error.code, message: error.message }));
}
