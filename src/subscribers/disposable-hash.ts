// Which bucket of the disposable list a domain falls in: shared by the build-time macro that lays the list out
// (disposable-list.ts) and the lookup (email.ts), so both place a domain alike.

/** Buckets of the compact list: about seven domains each. */
export const BUCKETS = 8192;

/** FNV-1a over the domain's UTF-16 code units, modulo BUCKETS. */
export function bucketOf(domain: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < domain.length; i++) h = Math.imul(h ^ domain.charCodeAt(i), 0x01000193);
  return (h >>> 0) % BUCKETS;
}
