// The ALTCHA widget in a form of ours (issue 16): its stylesheet, its loader and the element, all served
// by this binary (forms/routes.ts) under the pages' own CSP (script-src/style-src 'self'; the worker is same-origin).
import type { Waitlist } from "../http/api";
import { escapeHtml } from "./html";

/** Nothing when the waitlist's captcha is off; otherwise the widget, which solves on submit and adds the `altcha` field. */
export function captchaWidget(w: Pick<Waitlist, "key" | "captcha">): string {
  if (w.captcha !== "altcha") return "";
  return `<link rel="stylesheet" href="/assets/altcha/altcha.css"><script type="module" src="/assets/altcha/captcha.js"></script>
<altcha-widget challenge="/s/${escapeHtml(w.key)}/challenge" name="altcha" auto="onsubmit"></altcha-widget>`;
}
