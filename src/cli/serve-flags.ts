// serve's flags for help, parsing and suggestions, apart from the server itself (cli/serve.ts): the admin commands
// and `--help` load this and not the app, so they start in a fraction of the time.
import { describeSettings } from "../config";
import type { Flag } from "./command";

const SETTING_HELP: Record<string, string> = {
  PORT: "listen port (0: any free port)",
  HOST: "listen address",
  DATABASE_URL: "file: (embedded libSQL) or postgres:// (PostgreSQL 14+)",
  DATABASE_POOL_SIZE: "PostgreSQL connections per instance",
  DATABASE_SYNC: "full (survives power loss) or normal (survives a crash)",
  BASE_URL: "public origin used in every URL the service returns (default http://localhost:$PORT)",
  TRUST_PROXY: "honour X-Forwarded-For from a reverse proxy",
  INTERNAL_TOKEN: "secret (16+ characters) Caddy's on-demand TLS check sends to /internal/custom-domain",
  SMTP_URL: "smtp://user:pass@host:port or smtps://; unset: emails go to the log",
  MAIL_FROM: "sender (default Waitlist <noreply@BASE_URL host>); Message-IDs end in its domain",
  MAIL_RATE_PER_MINUTE: "broadcast emails sent per minute, all instances together",
  DKIM_DOMAIN: "DKIM-sign every email for this domain (with DKIM_SELECTOR and DKIM_PRIVATE_KEY or its file)",
  DKIM_SELECTOR: "the DKIM selector whose TXT record holds the public key",
  DKIM_PRIVATE_KEY_FILE: "path of the PEM private key (DKIM_PRIVATE_KEY may hold the PEM itself)",
  AI_BASE_URL: "OpenAI-compatible chat-completions endpoint",
  AI_API_KEY: "its key",
  AI_MODEL: "its model",
  AI_TIMEOUT_MS: "past it, generate answers 504",
  LANDING_PAGE_API: "off: every landing-page endpoint answers 503",
  LOG_LEVEL: "debug, info, warn or error",
  METRICS_TOKEN: "turns on GET /metrics, which then needs Authorization: Bearer <token>",
  WEBHOOK_BLOCK_PRIVATE: "refuse webhook URLs on loopback and private ranges",
  RATE_LIMITS: "off: no per-key and per-IP limits",
  BACKUP_DIR: "where `waitlist backup` writes by default; doctor checks the newest backup's age",
};

/** serve's flags for help and suggestions: one per setting, with its variable and default. */
export const serveFlags = (): Flag[] =>
  describeSettings().flatMap((s) =>
    s.flags.map((name, i) => ({
      name,
      value: "VALUE",
      help: i === 0 ? `${SETTING_HELP[s.env] ?? ""} [${s.env}]`.trim() : `same as --${s.flags[0]}`,
      // on/off as the README writes them
      fallback: i === 0 && s.fallback !== undefined && s.fallback !== null ? (typeof s.fallback === "boolean" ? (s.fallback ? "on" : "off") : String(s.fallback)) : undefined,
    })),
  );
