// drizzle-kit settings: the schema is the source of truth, migrations are committed under drizzle/
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./drizzle",
});
