// Sign-up metadata: the reserved keys of the spec split from the custom fields, with the caps of DESIGN §5.
import { badRequest } from "../http/errors";
import { normalizeIp } from "../http/client-ip";
import { METADATA_MAX_BYTES, METADATA_MAX_KEYS } from "./model";
import { lenientOrigin, type Origin } from "../analytics/sources";

const KEY_MAX = 100;

export interface Reserved {
  referredBy: string | null;
  referringDomain: string | null;
  clientIp: string | null;
  fingerprint: string | null;
  /** Issue 46: utm_source ... utm_content and referrer_host, which stay custom fields too. */
  origin: Origin;
}

function reservedString(value: unknown, field: string, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw badRequest(`metadata.${field} must be a string`);
  const v = value.trim();
  if (v.length > max) throw badRequest(`metadata.${field} must be at most ${max} characters`);
  return v || null;
}

/** Checks the caps on the custom fields that will be stored (keys count, key length, serialized size). */
export function checkCustomFields(fields: Record<string, unknown>): string {
  const keys = Object.keys(fields);
  if (keys.length > METADATA_MAX_KEYS) throw badRequest(`metadata must have at most ${METADATA_MAX_KEYS} keys`);
  const long = keys.find((k) => k.length > KEY_MAX || k.length === 0);
  if (long !== undefined) throw badRequest(`metadata keys must be 1 to ${KEY_MAX} characters`);
  const json = JSON.stringify(fields);
  if (new TextEncoder().encode(json).length > METADATA_MAX_BYTES) throw badRequest(`metadata must be at most ${METADATA_MAX_BYTES} bytes as JSON`);
  return json;
}

/** spec: reserved metadata keys on sign-up; every other key is a custom field. */
export function splitMetadata(metadata: Record<string, unknown> | undefined): { reserved: Reserved; custom: string } {
  const { referred_by, referring_domain, client_ip, fingerprint, ...custom } = metadata ?? {};
  // issue 16: IPv4 or IPv6, stored in one textual form so that the fraud rules compare like with like
  const given = reservedString(client_ip, "client_ip", 64);
  const clientIp = given === null ? null : normalizeIp(given);
  if (given !== null && clientIp === null) throw badRequest("metadata.client_ip must be a valid IPv4 or IPv6 address");
  const reserved: Reserved = {
    referredBy: reservedString(referred_by, "referred_by", 64),
    referringDomain: reservedString(referring_domain, "referring_domain", 253),
    clientIp,
    fingerprint: reservedString(fingerprint, "fingerprint", 200),
    // issue 46: read, not taken out: the spec keeps every other key as a custom field
    origin: lenientOrigin((field) => custom[field]),
  };
  return { reserved, custom: checkCustomFields(custom) };
}
