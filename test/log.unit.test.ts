// The server's log (src/log.ts): lines are written together, every 20 ms or 256 at a time, and what is left at the
// end is written before the process goes, whether it calls exit or runs out of work; every line whole, in order.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { createLogger, maskEmailsIn } from "../src/log";
import { track } from "./support/cleanup";

const CHILD = join(import.meta.dir, "support", "log-lines.ts");

for (const [how, lines] of [["exit", 5_000], ["end", 5_000], ["exit", 3], ["end", 300]] as const) {
  test(`${lines} lines, the process ending by ${how === "exit" ? "process.exit" : "running out of work"}, read late: all of them, in order`, async () => {
    const child = track(Bun.spawn([process.execPath, CHILD, String(lines), how], { stdout: "pipe", stderr: "pipe" }));
    // the reader is slow: the pipe fills before anything is read
    await Bun.sleep(300);
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    const got = out.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(got.map((l) => l.i)).toEqual(Array.from({ length: lines }, (_, i) => i));
    expect(got[0]).toMatchObject({ level: "info", msg: "request" });
  });
}

test("a line below the level is not written; the fields follow time, level and message", () => {
  const written: string[] = [];
  const log = createLogger("warn", (l) => written.push(l));
  log.info("quiet");
  log.warn("loud", { req_id: "r1", status: 500 });
  expect(written).toHaveLength(1);
  const line = JSON.parse(written[0]);
  expect(Object.keys(line)).toEqual(["time", "level", "msg", "req_id", "status"]);
  expect(line).toMatchObject({ level: "warn", msg: "loud", req_id: "r1", status: 500 });
});

test("every address in a text is masked before it is logged (an SMTP server's refusal names the recipient; issue 47)", () => {
  expect(maskEmailsIn("550 5.1.1 <bob.smith@example.co.uk>: no such user")).toBe("550 5.1.1 <b***@example.co.uk>: no such user");
  expect(maskEmailsIn("Hi ann@x.io, and carl+tag@mail.example.org.")).toBe("Hi a***@x.io, and c***@mail.example.org.");
  expect(maskEmailsIn("no address here, only @mentions and a@b")).toBe("no address here, only @mentions and a@b");
});
