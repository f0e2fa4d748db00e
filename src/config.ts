// Environment variables and `serve` flags -> one validated Config (DESIGN §3). Nothing else reads process.env.
import { readFileSync } from "node:fs";
import type { Level } from "./log";

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  /** PostgreSQL connections per instance. */
  databasePoolSize: number;
  /** SQLite `synchronous` for an embedded database: full (default) survives power loss, normal only a crash. */
  databaseSync: "full" | "normal";
  /** Public origin without a trailing slash; filled from the bound port when BASE_URL is unset. */
  baseUrl: string;
  trustProxy: boolean;
  /** Issue 16: the secret Caddy's on-demand TLS `ask` sends to /internal/custom-domain (`?token=`); unset: direct local callers only. */
  internalToken?: string | null;
  smtpUrl: string | null;
  mailFrom: string;
  /** Issue 45: emails of broadcasts leave at most this many a minute (per deployment, shared by instances). */
  mailRatePerMinute: number;
  /** Issue 45: DKIM signing of every email; all three set or none. */
  dkimDomain: string | null;
  dkimSelector: string | null;
  /** The PEM itself (DKIM_PRIVATE_KEY) or read from DKIM_PRIVATE_KEY_FILE. */
  dkimPrivateKey: string | null;
  dkimPrivateKeyFile: string | null;
  aiBaseUrl: string | null;
  aiApiKey: string | null;
  aiModel: string | null;
  aiTimeoutMs: number;
  landingPageApi: boolean;
  logLevel: Level;
  /** Issue 17: GET /metrics answers only with `Authorization: Bearer <token>`; unset, it is a 404. */
  metricsToken: string | null;
  webhookBlockPrivate: boolean;
  rateLimits: boolean;
  /** Where `waitlist backup` writes by default; doctor reports the newest backup's age. */
  backupDir: string | null;
}

export class ConfigError extends Error {}

type Parser<T> = (raw: string, name: string) => T;

interface Setting<K extends keyof Config> {
  key: K;
  env: string;
  flags: string[];
  parse: Parser<Config[K]>;
}

const fail = (name: string, why: string): never => {
  throw new ConfigError(`${name}: ${why}`);
};

const bool: Parser<boolean> = (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (["true", "on", "1", "yes"].includes(v)) return true;
  if (["false", "off", "0", "no"].includes(v)) return false;
  return fail(name, `expected true/false or on/off, got "${raw}"`);
};
const text: Parser<string> = (raw, name) => (raw.trim() === "" ? fail(name, "must not be empty") : raw.trim());
const int = (min: number, max: number): Parser<number> => (raw, name) => {
  const n = Number(raw);
  return /^\d+$/.test(raw.trim()) && n >= min && n <= max ? n : fail(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
};
const url = (schemes: string[]): Parser<string> => (raw, name) => {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return fail(name, `not a valid URL: "${raw}"`);
  }
  if (!schemes.includes(u.protocol)) fail(name, `scheme must be one of ${schemes.join(", ")}, got "${u.protocol}"`);
  return raw.trim().replace(/\/+$/, "");
};
const oneOf = <T extends string>(values: readonly T[]): Parser<T> => (raw, name) =>
  (values as readonly string[]).includes(raw.trim().toLowerCase()) ? (raw.trim().toLowerCase() as T) : fail(name, `expected one of ${values.join(", ")}, got "${raw}"`);

const SETTINGS: Setting<keyof Config>[] = [
  { key: "port", env: "PORT", flags: ["port"], parse: int(0, 65535) },
  { key: "host", env: "HOST", flags: ["host"], parse: text },
  // issue 18: embedded libSQL or PostgreSQL; no libSQL server (none can be tested here)
  { key: "databaseUrl", env: "DATABASE_URL", flags: ["db", "database-url"], parse: url(["file:", "postgres:", "postgresql:"]) },
  { key: "databasePoolSize", env: "DATABASE_POOL_SIZE", flags: ["database-pool-size"], parse: int(1, 1000) },
  { key: "databaseSync", env: "DATABASE_SYNC", flags: ["database-sync"], parse: oneOf(["full", "normal"] as const) },
  { key: "baseUrl", env: "BASE_URL", flags: ["base-url"], parse: url(["http:", "https:"]) },
  { key: "trustProxy", env: "TRUST_PROXY", flags: ["trust-proxy"], parse: bool },
  { key: "internalToken", env: "INTERNAL_TOKEN", flags: ["internal-token"], parse: (raw, name) => (raw.trim().length >= 16 ? raw.trim() : fail(name, "must be at least 16 characters")) },
  { key: "smtpUrl", env: "SMTP_URL", flags: ["smtp-url"], parse: url(["smtp:", "smtps:"]) },
  { key: "mailFrom", env: "MAIL_FROM", flags: ["mail-from"], parse: text },
  { key: "mailRatePerMinute", env: "MAIL_RATE_PER_MINUTE", flags: ["mail-rate-per-minute"], parse: int(1, 1_000_000) },
  { key: "dkimDomain", env: "DKIM_DOMAIN", flags: ["dkim-domain"], parse: text },
  { key: "dkimSelector", env: "DKIM_SELECTOR", flags: ["dkim-selector"], parse: text },
  { key: "dkimPrivateKey", env: "DKIM_PRIVATE_KEY", flags: [], parse: text },
  { key: "dkimPrivateKeyFile", env: "DKIM_PRIVATE_KEY_FILE", flags: ["dkim-private-key-file"], parse: text },
  { key: "aiBaseUrl", env: "AI_BASE_URL", flags: ["ai-base-url"], parse: url(["http:", "https:"]) },
  { key: "aiApiKey", env: "AI_API_KEY", flags: ["ai-api-key"], parse: text },
  { key: "aiModel", env: "AI_MODEL", flags: ["ai-model"], parse: text },
  { key: "aiTimeoutMs", env: "AI_TIMEOUT_MS", flags: ["ai-timeout-ms"], parse: int(1, 3_600_000) },
  { key: "landingPageApi", env: "LANDING_PAGE_API", flags: ["landing-page-api"], parse: bool },
  { key: "logLevel", env: "LOG_LEVEL", flags: ["log-level"], parse: oneOf(["debug", "info", "warn", "error"] as const) },
  { key: "metricsToken", env: "METRICS_TOKEN", flags: ["metrics-token"], parse: text },
  { key: "webhookBlockPrivate", env: "WEBHOOK_BLOCK_PRIVATE", flags: ["webhook-block-private"], parse: bool },
  { key: "rateLimits", env: "RATE_LIMITS", flags: ["rate-limits"], parse: bool },
  { key: "backupDir", env: "BACKUP_DIR", flags: ["backup-dir"], parse: text },
];

/** Flags that may be given bare, meaning true. */
export const BOOLEAN_FLAGS = new Set(["trust-proxy", "landing-page-api", "webhook-block-private", "rate-limits"]);
export const CONFIG_FLAGS = new Set(SETTINGS.flatMap((s) => s.flags));

const DEFAULTS = {
  port: 3000,
  host: "0.0.0.0",
  databaseUrl: "file:./data/waitlist.db",
  databasePoolSize: 10,
  databaseSync: "full",
  trustProxy: false,
  smtpUrl: null,
  mailRatePerMinute: 600,
  dkimDomain: null,
  dkimSelector: null,
  dkimPrivateKey: null,
  dkimPrivateKeyFile: null,
  aiBaseUrl: null,
  aiApiKey: null,
  aiModel: null,
  aiTimeoutMs: 60_000,
  landingPageApi: true,
  logLevel: "info",
  metricsToken: null,
  webhookBlockPrivate: false,
  rateLimits: true,
  backupDir: null,
} satisfies Partial<Config>;

/** Each setting's variable, flags and default, for `waitlist serve --help`. */
export const describeSettings = () =>
  SETTINGS.map((s) => ({ env: s.env, flags: s.flags, fallback: (DEFAULTS as Record<string, unknown>)[s.key] as string | number | boolean | null | undefined }));

/** Flags win over the environment; a bad value throws ConfigError naming the variable or flag. */
export function loadConfig(env: Record<string, string | undefined>, flags: Map<string, string> = new Map(), only?: (keyof Config)[]): Config {
  const values: Partial<Config> = { ...DEFAULTS };
  for (const s of SETTINGS) {
    if (only && !only.includes(s.key)) continue;
    const flag = s.flags.find((f) => flags.has(f));
    if (flag !== undefined) (values as any)[s.key] = s.parse(flags.get(flag)!, `--${flag}`);
    else if (env[s.env] !== undefined && env[s.env] !== "") (values as any)[s.key] = s.parse(env[s.env]!, s.env);
  }
  const config = values as Config;
  config.baseUrl ??= `http://localhost:${config.port}`;
  config.mailFrom ??= `Waitlist <noreply@${new URL(config.baseUrl).hostname}>`;
  if (!only) checkDkim(config);
  return config;
}

/** The sender's domain: what Message-IDs end in (issue 45). */
export const mailDomain = (mailFrom: string): string => /@([^>\s]+)>?\s*$/.exec(mailFrom)?.[1]?.toLowerCase() ?? "localhost";

/** DKIM needs its domain, selector and key together; the key file is read here, so a bad path stops start-up. */
function checkDkim(config: Config) {
  if (config.dkimPrivateKey && config.dkimPrivateKeyFile) fail("DKIM_PRIVATE_KEY_FILE", "set DKIM_PRIVATE_KEY or DKIM_PRIVATE_KEY_FILE, not both");
  if (config.dkimPrivateKeyFile) {
    try {
      config.dkimPrivateKey = readFileSync(config.dkimPrivateKeyFile, "utf8");
    } catch (err) {
      fail("DKIM_PRIVATE_KEY_FILE", `cannot read ${config.dkimPrivateKeyFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (config.dkimPrivateKey && !/-----BEGIN (RSA |EC )?PRIVATE KEY-----/.test(config.dkimPrivateKey)) fail("DKIM_PRIVATE_KEY", "must be a PEM private key (-----BEGIN PRIVATE KEY-----)");
  const set = [config.dkimDomain, config.dkimSelector, config.dkimPrivateKey].filter((v) => v !== null).length;
  if (set !== 0 && set !== 3) fail("DKIM_DOMAIN", "DKIM signing needs DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY (or DKIM_PRIVATE_KEY_FILE) together");
}

/** DATABASE_URL on its own, for admin commands (`--db` wins). */
export function databaseSettings(env: Record<string, string | undefined>, flags: Map<string, string>) {
  const c = loadConfig(env, flags, ["databaseUrl", "databasePoolSize", "databaseSync"]);
  return { url: c.databaseUrl, poolSize: c.databasePoolSize, sync: c.databaseSync };
}
