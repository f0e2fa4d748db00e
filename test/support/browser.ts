// Real Chromium (Debian's package) driven by playwright-core; every request off the test host is refused and recorded.
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
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
