// The tests that use PostgreSQL's driver directly load it with the server's fix (src/db/pg-driver.ts), before any
// of them imports it (bunfig.toml preloads this file).
import { installPgDriverFix } from "../../src/db/pg-driver";

installPgDriverFix();
