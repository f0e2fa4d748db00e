// The AI page sanitizer (issue 16 item 7): a parser-based allow-list whose output is stable under re-parsing, over the
// table of hostile payloads, and what it keeps of an ordinary page.
import { describe, expect, test } from "bun:test";
import { isSafeUrl, sanitizePage } from "../src/ai/sanitize";
import { cleanStylesheet } from "../src/ai/css";
import { activeParts, goodForm, XSS_PAYLOADS } from "./support/xss";

const ACTION = "/s/wl_key";

describe("hostile payloads leave nothing active", () => {
  test(`the table has at least 40 payloads (${XSS_PAYLOADS.length})`, () => expect(XSS_PAYLOADS.length).toBeGreaterThanOrEqual(40));
  test("the check itself sees every raw payload as active, except those a body parse alone makes inert", () => {
    const inertByParsing = ["body onload", "javascript: with a NUL", "frameset onload", "nested script tags", "conditional comment", "CDATA outside foreign content", "encoded markup in an attribute"];
    const unseen = XSS_PAYLOADS.filter(([, html]) => activeParts(html, { formAction: ACTION }).length === 0).map(([name]) => name);
    expect(unseen).toEqual(inertByParsing);
  });
  test.each(XSS_PAYLOADS)("%s", (_name, payload) => {
    const { html, css } = sanitizePage(goodForm("wl_key") + payload, ACTION);
    expect(activeParts(html, { formAction: ACTION, css })).toEqual([]);
    // the page keeps its form, so it can still be published without the hostile part
    expect(html).toStartWith(`<form method="post" action="${ACTION}"><input type="email" name="email" required=""><button type="submit">Join</button></form>`);
    // stable: sanitizing the output again changes nothing (what a browser parses is what was checked)
    expect(sanitizePage(html, ACTION).html).toBe(html);
  });
});

describe("an ordinary page keeps its design", () => {
  test("allowed elements, attributes, links and classes stay; style attributes become classes in the stylesheet", () => {
    const { html, css } = sanitizePage(
      `<style>.hero { color: #222; padding: 40px } @media (max-width: 600px) { .hero { padding: 8px } }</style>
<section class="hero" id="top" aria-label="Intro"><h1 style="font-size: 48px">Fly</h1><p>Fast &amp; <strong>safe</strong> &lt;3</p>
<a href="https://example.com/about?a=1&amp;b=2" target="_blank">About</a> <a href="#faq">FAQ</a> <a href="mailto:hi@example.com">Mail</a>
<form><input type="email" name="email" required placeholder="you@example.com"><input type="text" name="name"><button type="submit">Join</button></form></section>`,
      ACTION,
    );
    expect(html).toBe(
      `\n<section class="hero" id="top" aria-label="Intro"><h1 class="ai-s0">Fly</h1><p>Fast &amp; <strong>safe</strong> &lt;3</p>
<a href="https://example.com/about?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">About</a> <a href="#faq" rel="noopener noreferrer">FAQ</a> <a href="mailto:hi@example.com" rel="noopener noreferrer">Mail</a>
<form method="post" action="${ACTION}"><input type="email" name="email" required="" placeholder="you@example.com"><input type="text" name="name"><button type="submit">Join</button></form></section>`,
    );
    expect(css).toBe(".hero { color: #222; padding: 40px }\n@media (max-width: 600px) { .hero { padding: 8px } }\n.ai-s0 { font-size: 48px }");
  });

  test("unknown elements are unwrapped (their text stays); raw-text and foreign elements go with their content", () => {
    expect(sanitizePage(`<center><font color="red">Hello</font></center><svg><text>gone</text></svg><textarea>gone too</textarea>`, ACTION).html).toBe("Hello");
  });

  test("URL checks decode entities and ignore whitespace and control characters", () => {
    for (const bad of ["javascript:alert(1)", " java\tscript:x", "JAVASCRIPT:x", "java\u0000script:x", "data:text/html,x", "vbscript:x", "//evil.example", "/\\evil.example", "\\\\evil.example"]) {
      expect(isSafeUrl(bad), JSON.stringify(bad)).toBe(false);
    }
    for (const ok of ["https://example.com", "http://x.y/z", "mailto:a@b.c", "tel:+123", "/pricing", "#top", "?q=1", "about-us"]) expect(isSafeUrl(ok), ok).toBe(true);
  });

  test("the stylesheet filter drops url(), at-rules, escapes and markup, keeps the rest", () => {
    expect(cleanStylesheet(`@import url(x.css); @charset "x"; .a { color: red; background: url(x) } .b { width: 1px } .c { content: "\\3c" }`)).toBe(".a { color: red }\n.b { width: 1px }");
    expect(cleanStylesheet(`.a { color: red } /* unterminated .b { background: url(x) }`)).toBe(".a { color: red }");
  });
});
