// A process that writes N request-like log lines through the server's logger (src/log.ts), then ends: by
// process.exit when its second argument is "exit", else by running out of work. For test/log.unit.test.ts.
import { createLogger } from "../../src/log";

const log = createLogger("info");
const n = Number(process.argv[2]);
for (let i = 0; i < n; i++) log.info("request", { i, path: `/p/page-${"x".repeat(80)}` });
if (process.argv[3] === "exit") process.exit(0);
