// Builds the single executable dist/waitlist with Bun.build --compile.
// DESIGN §1 trap: libsql loads its native addon with a dynamic require the bundler cannot follow;
// this plugin rewrites it to the platform's `@libsql/<target>/index.node` so the addon is embedded, in both of
// libsql's entry points (the file writer takes its async COMMIT from `libsql/promise`): one addon, loaded once.
// Left unpatched, an entry point loads a second copy from the build machine's node_modules (SQLite twice in one
// process, the connection handed between them: the server hung).
import { familySync, GLIBC } from "detect-libc";

const arch = process.arch === "arm64" ? "arm64" : "x64";
const target = process.platform === "darwin" ? `darwin-${arch}` : `linux-${arch}-${familySync() === GLIBC ? "gnu" : "musl"}`;

const embedLibsqlAddon: Bun.BunPlugin = {
  name: "embed-libsql-addon",
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/](?:index|promise)\.js$/ }, async (args) => {
      const source = await Bun.file(args.path).text();
      const patched = source.replace(/return require\(`@libsql\/\$\{target\}`\);/, `return require("@libsql/${target}/index.node");`);
      if (patched === source) throw new Error("libsql's native require was not found; check scripts/build.ts against the installed libsql");
      return { contents: patched, loader: "js" };
    });
  },
};

// `waitlist --version` names the commit the binary was built from (src/cli/version.ts)
const git = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: import.meta.dir, stdout: "pipe", stderr: "ignore" });
const commit = (git.exitCode === 0 && git.stdout.toString().trim()) || "unknown";

const result = await Bun.build({
  entrypoints: ["./src/main.ts"],
  // --smol: a smaller heap, collected more often; keeps the resident set of a VPS instance down
  compile: { outfile: "./dist/waitlist", execArgv: ["--smol"] },
  // STYLE: full --minify renames identifiers Elysia inspects. Whitespace minification is off too: Elysia's
  // inference (sucrose) reads a method's parameters from its first source line, and on one line it misreads
  // them and prints a warning with code on stdout (issue 17). Syntax only, then: the binary is 0.4% larger.
  minify: { whitespace: false, syntax: true, identifiers: false },
  sourcemap: "none",
  // precompiled JSC bytecode: the binary starts in about half the time and idles in less memory
  bytecode: true,
  plugins: [embedLibsqlAddon],
  define: { WAITLIST_COMMIT: JSON.stringify(commit) },
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built dist/waitlist for ${target}`);
