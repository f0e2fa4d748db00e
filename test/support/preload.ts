// Loaded before every test file (bunfig.toml): what the whole run shares is stopped once, after the last file.
import { afterAll } from "bun:test";
import { stopTestPg } from "./pg";

afterAll(stopTestPg);
