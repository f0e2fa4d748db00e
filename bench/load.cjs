// Load generator: autocannon (run under Node) against one route; prints one JSON line of results.
// usage: node bench/load.cjs '{"url":"http://127.0.0.1:3000/path","method":"POST","headers":{},"connections":64,"duration":5,"emailBody":true}'
const autocannon = require("autocannon");

const opts = JSON.parse(process.argv[2]);
const request = { method: opts.method ?? "GET", path: new URL(opts.url).pathname + new URL(opts.url).search, headers: opts.headers ?? {} };
let setupClient;
// email numbers drawn (one a request sent, with emailBody)
let n = 0;
if (opts.emailBody) {
  // Each request a new email (DESIGN §7), its number written into the request's bytes in place. With a `setupRequest`,
  // autocannon builds each request anew (headers, buffers): 68-160 us of this process's CPU a sign-up against 24-35 a
  // GET, taken from the two cores the server runs on (bench/README.md). Each connection gets a request of its own, whose
  // bytes autocannon writes again for each request it sends; the number changes before each send (its 'request' event),
  // after the last send's answer has come.
  const prefix = `${process.pid}-${Date.now().toString(36)}`;
  // the number, then "_" to a fixed width: "_" sorts after every digit, as the "@" after an unpadded number did, so the
  // emails sort (and land in the email index) as they did when each request was built anew
  const WIDTH = 12;
  const PAD = "_".repeat(WIDTH);
  const digits = "#".repeat(WIDTH);
  request.body = JSON.stringify({ email: `load-${prefix}-${digits}@example.com` });
  setupClient = (client) => {
    const own = { ...request, headers: { ...request.headers } };
    client.setRequests([own]);
    const bytes = own.requestBuffer;
    const at = Buffer.isBuffer(bytes) ? bytes.lastIndexOf(digits) : -1;
    if (at < 0) throw new Error("autocannon did not build the connection's request as expected: its bytes hold no email number");
    client.on("request", () => {
      const number = String(n++);
      bytes.write(number + PAD.slice(number.length), at, "latin1");
    });
  };
} else if (opts.body) {
  request.body = opts.body;
}
autocannon(
  { url: new URL(opts.url).origin, connections: opts.connections ?? 64, duration: opts.duration ?? 5, requests: [request], setupClient },
  (err, result) => {
    if (err) {
      console.error(err);
      process.exit(1);
    }
    // every request sent had a number of its own, or the figures are of repeat sign-ups
    const sent = result.requests.sent ?? result.requests.total;
    if (opts.emailBody && n < sent) {
      console.error(`${sent} requests sent but ${n} email numbers drawn`);
      process.exit(1);
    }
    console.log(
      JSON.stringify({
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        total: result.requests.total,
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
      }),
    );
  },
);
