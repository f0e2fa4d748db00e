// DESIGN §3 configuration: every variable optional with the table's default, flags win over the
// environment, a bad value is refused naming the variable (or flag) and `serve` exits 2.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../src/config";
import { runCli } from "./support/server";

/** The message line of stderr: the usage text that follows it mentions every flag. */
const firstLine = (stderr: string) => stderr.split("\n")[0];
const flags = (entries: Record<string, string>) => new Map(Object.entries(entries));

/** The error loadConfig throws, or a failure if it returns. */
function configError(env: Record<string, string>, given: Map<string, string> = new Map()): ConfigError {
  try {
    loadConfig(env, given);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify({ env, flags: [...given] })}`);
}

describe("loadConfig defaults (DESIGN §3 table)", () => {
  test("with no variables and no flags every setting has the table's default", () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: "0.0.0.0",
      databaseUrl: "file:./data/waitlist.db",
      databasePoolSize: 10,
      databaseSync: "full",
      baseUrl: "http://localhost:3000",
      trustProxy: false,
      smtpUrl: null,
      mailFrom: "Waitlist <noreply@localhost>",
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
    });
  });

  test("BASE_URL defaults to http://localhost:$PORT, following PORT or --port", () => {
    expect(loadConfig({ PORT: "8080" }).baseUrl).toBe("http://localhost:8080");
    expect(loadConfig({ PORT: "8080" }, flags({ port: "9090" })).baseUrl).toBe("http://localhost:9090");
  });

  test("MAIL_FROM defaults to Waitlist <noreply@BASE_URL host>", () => {
    expect(loadConfig({ BASE_URL: "https://wl.example.com" }).mailFrom).toBe("Waitlist <noreply@wl.example.com>");
    expect(loadConfig({}, flags({ "base-url": "https://join.example.org" })).mailFrom).toBe("Waitlist <noreply@join.example.org>");
    expect(loadConfig({ BASE_URL: "https://wl.example.com", MAIL_FROM: "Team <team@example.com>" }).mailFrom).toBe("Team <team@example.com>");
  });
});

describe("loadConfig reads the environment", () => {
  test("every variable of the table is parsed into its setting", () => {
    const env = {
      PORT: "8080",
      HOST: "127.0.0.1",
      DATABASE_URL: "postgres://waitlist:pw@db.example.com:5432/waitlist?sslmode=require",
      DATABASE_POOL_SIZE: "20",
      DATABASE_SYNC: "normal",
      BASE_URL: "https://wl.example.com",
      TRUST_PROXY: "true",
      SMTP_URL: "smtp://user:pass@mail.example.com:587",
      MAIL_FROM: "Launch <hello@example.com>",
      MAIL_RATE_PER_MINUTE: "1200",
      DKIM_DOMAIN: "example.com",
      DKIM_SELECTOR: "wl1",
      DKIM_PRIVATE_KEY: "-----BEGIN PRIVATE KEY-----\nMII...\n-----END PRIVATE KEY-----",
      AI_BASE_URL: "http://127.0.0.1:11434/v1",
      AI_API_KEY: "sk-test",
      AI_MODEL: "llama3",
      AI_TIMEOUT_MS: "1500",
      LANDING_PAGE_API: "off",
      LOG_LEVEL: "debug",
      METRICS_TOKEN: "scrape-token",
      WEBHOOK_BLOCK_PRIVATE: "true",
      RATE_LIMITS: "off",
      BACKUP_DIR: "/var/backups/waitlist",
    };
    expect(loadConfig(env)).toEqual({
      port: 8080,
      host: "127.0.0.1",
      databaseUrl: "postgres://waitlist:pw@db.example.com:5432/waitlist?sslmode=require",
      databasePoolSize: 20,
      databaseSync: "normal",
      baseUrl: "https://wl.example.com",
      trustProxy: true,
      smtpUrl: "smtp://user:pass@mail.example.com:587",
      mailFrom: "Launch <hello@example.com>",
      mailRatePerMinute: 1200,
      dkimDomain: "example.com",
      dkimSelector: "wl1",
      dkimPrivateKey: "-----BEGIN PRIVATE KEY-----\nMII...\n-----END PRIVATE KEY-----",
      dkimPrivateKeyFile: null,
      aiBaseUrl: "http://127.0.0.1:11434/v1",
      aiApiKey: "sk-test",
      aiModel: "llama3",
      aiTimeoutMs: 1500,
      landingPageApi: false,
      logLevel: "debug",
      metricsToken: "scrape-token",
      webhookBlockPrivate: true,
      rateLimits: false,
      backupDir: "/var/backups/waitlist",
    });
  });

  test("DATABASE_URL accepts file:, postgres:// and postgresql:// URLs, and no libSQL server; SMTP_URL accepts smtps://", () => {
    for (const url of ["file:/tmp/x.db", "postgres://u:p@127.0.0.1:5432/w", "postgresql://db.example.com/w?sslmode=require"]) {
      expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    }
    for (const url of ["libsql://db.example.com", "http://127.0.0.1:8080"]) expect(() => loadConfig({ DATABASE_URL: url })).toThrow("scheme must be one of file:, postgres:, postgresql:");
    expect(loadConfig({ SMTP_URL: "smtps://u:p@mail.example.com:465" }).smtpUrl).toBe("smtps://u:p@mail.example.com:465");
  });
});

describe("flags win over the environment", () => {
  test("--port, --host, --db, --base-url and --log-level override PORT, HOST, DATABASE_URL, BASE_URL and LOG_LEVEL", () => {
    const env = { PORT: "8080", HOST: "0.0.0.0", DATABASE_URL: "file:/tmp/env.db", BASE_URL: "https://env.example.com", LOG_LEVEL: "error" };
    const c = loadConfig(env, flags({ port: "9090", host: "127.0.0.1", db: "file:/tmp/flag.db", "base-url": "https://flag.example.com", "log-level": "warn" }));
    expect(c).toMatchObject({ port: 9090, host: "127.0.0.1", databaseUrl: "file:/tmp/flag.db", baseUrl: "https://flag.example.com", logLevel: "warn" });
    expect(c.mailFrom).toBe("Waitlist <noreply@flag.example.com>");
  });

  test("a flag wins even when the variable's value is bad", () => {
    expect(loadConfig({ PORT: "abc" }, flags({ port: "4000" })).port).toBe(4000);
  });
});

describe("a bad value throws ConfigError naming the variable or flag", () => {
  const bad: [string, string][] = [
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["RATE_LIMITS", "maybe"],
    ["LOG_LEVEL", "loud"],
    ["DATABASE_URL", "notaurl"],
    ["DATABASE_POOL_SIZE", "0"],
    ["BASE_URL", "ftp://x"],
    ["AI_TIMEOUT_MS", "0"],
    ["SMTP_URL", "http://x"],
    ["MAIL_RATE_PER_MINUTE", "0"],
    ["DKIM_DOMAIN", "example.com"],
    ["DKIM_PRIVATE_KEY", "not a pem"],
    ["DKIM_PRIVATE_KEY_FILE", "/nonexistent/dkim.pem"],
  ];
  for (const [name, value] of bad) {
    test(`${name}=${value} is refused naming ${name}`, () => {
      expect(configError({ [name]: value }).message).toContain(name);
    });
  }

  const badFlags: [string, string][] = [
    ["port", "abc"],
    ["port", "70000"],
    ["rate-limits", "maybe"],
    ["log-level", "loud"],
    ["db", "notaurl"],
    ["base-url", "ftp://x"],
    ["ai-timeout-ms", "0"],
    ["smtp-url", "http://x"],
    ["mail-rate-per-minute", "-1"],
  ];
  for (const [flag, value] of badFlags) {
    test(`--${flag} ${value} is refused naming --${flag}`, () => {
      expect(configError({}, flags({ [flag]: value })).message).toContain(`--${flag}`);
    });
  }
});

describe("serve refuses bad configuration with exit code 2", () => {
  test("--port abc, PORT=abc and an unknown serve flag exit 2 naming the culprit on stderr", async () => {
    const dir = mkdtempSync(join(tmpdir(), "waitlist-config-"));
    // were a case wrongly accepted, the server would bind loopback only and a throwaway database
    const safe = { HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir, "w.db")}` };
    try {
      const [flag, env, unknown] = await Promise.all([
        runCli(["serve", "--port", "abc"], safe),
        runCli(["serve"], { ...safe, PORT: "abc" }),
        runCli(["serve", "--frobnicate", "1"], { ...safe, PORT: "0" }),
      ]);
      expect(flag.code).toBe(2);
      expect(firstLine(flag.stderr)).toContain("--port");
      expect(flag.stdout).toBe("");
      expect(env.code).toBe(2);
      expect(firstLine(env.stderr)).toContain("PORT");
      expect(env.stdout).toBe("");
      expect(unknown.code).toBe(2);
      expect(firstLine(unknown.stderr)).toContain("--frobnicate");
      expect(unknown.stdout).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test("DATABASE_SYNC is full or normal (our extension: the durability trade-off)", () => {
  expect(loadConfig({ DATABASE_SYNC: "NORMAL" }).databaseSync).toBe("normal");
  expect(() => loadConfig({ DATABASE_SYNC: "off" })).toThrow(/DATABASE_SYNC/);
});
