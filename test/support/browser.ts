// Real Chromium (Debian's package) driven by playwright-core; every request off the test host is refused and recorded.
// Without Chromium the browser tests skip, saying so once; CI sets REQUIRE_BROWSER=1 so that there they fail instead.
import { describe as bunDescribe, test as bunTest } from "bun:test";
import { accessSync, constants } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { onCleanup } from "./cleanup";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export const hasChromium = isExecutable(CHROMIUM);
if (!hasChromium) {
  const why = `Chromium not found at ${CHROMIUM}`;
  if (process.env.REQUIRE_BROWSER === "1") throw new Error(`${why}, and REQUIRE_BROWSER=1 needs the browser tests to run: apt-get install chromium (or set CHROMIUM_PATH)`);
  console.warn(`browser tests skipped: ${why}; to run them, apt-get install chromium (or set CHROMIUM_PATH)`);
}

/** `test` and `describe` for tests that drive the browser: skipped (not failed) without Chromium. */
export const browserTest: typeof bunTest = hasChromium ? bunTest : (bunTest.skip as typeof bunTest);
export const browserDescribe: typeof bunDescribe = hasChromium ? bunDescribe : (bunDescribe.skip as typeof bunDescribe);
// the name files of browser tests import, so that their tests read as tests
export { browserTest as test, browserDescribe as describe };

/** Stands in for the browser where there is none: closing it is fine, anything else says why (its tests are skipped). */
const NO_BROWSER = new Proxy({} as Browser, {
  get(_, prop) {
    if (prop === "then") return undefined; // not a promise
    if (prop === "close") return async () => {};
    return () => {
      throw new Error(`Chromium not found at ${CHROMIUM}: this test should be a browserTest`);
    };
  },
});

export async function launchBrowser(): Promise<Browser> {
  if (!hasChromium) return NO_BROWSER;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  // closed at the end of the run at the latest (a test that failed in beforeAll never reaches its afterAll's close)
  const unregister = onCleanup(() => browser.close());
  browser.on("disconnected", unregister);
  return browser;
}

/** A page that may only talk to `origin`; anything else is aborted and listed in `offsite`. */
export async function isolatedPage(browser: Browser, origin: string): Promise<{ page: Page; offsite: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const offsite: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    offsite.push(url);
    return route.abort();
  });
  return { page, offsite };
}
