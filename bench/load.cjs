// Load generator: autocannon (run under Node) against one route; prints one JSON line of results.
// usage: node bench/load.cjs '{"url":"http://127.0.0.1:3000/path","method":"POST","headers":{},"connections":64,"duration":5,"emailBody":true}'
const autocannon = require("autocannon");

const opts = JSON.parse(process.argv[2]);
let n = 0;
const prefix = `${process.pid}-${Date.now().toString(36)}`;
const request = { method: opts.method ?? "GET", path: new URL(opts.url).pathname + new URL(opts.url).search, headers: opts.headers ?? {} };
if (opts.emailBody) {
  // each request a new email (DESIGN §7)
  request.setupRequest = (req) => ({ ...req, body: JSON.stringify({ email: `load-${prefix}-${n++}@example.com` }) });
} else if (opts.body) {
  request.body = opts.body;
}
autocannon(
  { url: new URL(opts.url).origin, connections: opts.connections ?? 64, duration: opts.duration ?? 5, requests: [request] },
  (err, result) => {
    if (err) {
      console.error(err);
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
