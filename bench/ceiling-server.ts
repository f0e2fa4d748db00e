// The throughput ceiling (DESIGN §7): a bare Bun.serve route answering {}; prints its port.
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({}) });
console.log(JSON.stringify({ port: server.port }));
