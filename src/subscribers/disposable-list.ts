// A macro (imported `with { type: "macro" }`): runs when the code is bundled or transpiled, never in the server.
// It lays mailchecker's disposable domains out as one string: BUCKETS buckets separated by "|", each "\n"-framed
// ("\na.com\nb.net\n"). The server holds that string, about 0.9 MB, instead of mailchecker's Set of 56,000
// strings (4.2 MB of live heap, which JavaScriptCore lets grow fourfold under load before collecting; issue 19).
import { blacklist } from "mailchecker";
import { bucketOf, BUCKETS } from "./disposable-hash";

export function disposableDomains(): string {
  const buckets: string[][] = Array.from({ length: BUCKETS }, () => []);
  for (const domain of blacklist()) buckets[bucketOf(domain)].push(domain);
  return buckets.map((b) => `\n${b.map((domain) => `${domain}\n`).join("")}`).join("|");
}
