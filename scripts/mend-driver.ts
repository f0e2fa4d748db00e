// `postinstall`: mends PostgreSQL's driver in node_modules (src/db/pg-driver.ts); an already mended file is left as
// it is, and a driver source the fixes were not made for fails the install with one line.
import { join } from "node:path";
import { CONNECTION_JS, mendConnectionSource } from "../src/db/pg/driver";

const path = join(import.meta.dir, "..", CONNECTION_JS);
try {
  const source = await Bun.file(path).text();
  const mended = mendConnectionSource(source);
  if (mended !== source) await Bun.write(path, mended);
} catch (err) {
  console.error(`mending the PostgreSQL driver failed: ${(err as Error).message}`);
  process.exit(1);
}
