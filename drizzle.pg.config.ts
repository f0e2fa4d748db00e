// drizzle-kit settings for PostgreSQL (issue 18): the pg-core twin of the schema, migrations committed under drizzle-pg/
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema.pg.ts",
  out: "./drizzle-pg",
});
