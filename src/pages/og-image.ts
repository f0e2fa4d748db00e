// The generated share image (issue 46 item 5) of a waitlist without og_image_url: a 1200x630 PNG of its name on its
// brand colour. resvg compiled to WebAssembly draws it with a font embedded in the binary: no native addon, no system
// font, nothing fetched. The drawing depends on (name, colour) alone, so each is drawn once per process and kept.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { initWasm, Resvg } from "@resvg/resvg-wasm";
import wasmPath from "@resvg/resvg-wasm/index_bg.wasm" with { type: "file" };
import fontPath from "dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf" with { type: "file" };
import { fontWidths, type FontWidths } from "./font-widths";
import { escapeHtml } from "./html";

export const SHARE_IMAGE_WIDTH = 1200;
export const SHARE_IMAGE_HEIGHT = 630;

/** What the image shows: the waitlist's name and its brand colour (settings email_template.color, #rrggbb). */
export interface ShareLook {
  name: string;
  color: string;
}

/** Part of every ETag: a change to the drawing below changes it, so no cache keeps the old picture. */
const DRAWING = "1";
const FAMILY = "DejaVu Sans";
const MARGIN = 80;
const TEXT_WIDTH = SHARE_IMAGE_WIDTH - 2 * MARGIN;
/** The name's sizes, largest first: the first at which it fits on MAX_LINES lines is used. */
const SIZES = [104, 88, 76, 64];
const MAX_LINES = 3;
const LINE_HEIGHT = 1.15;
/** DejaVu Sans Bold's capital height, in ems. */
const CAP_HEIGHT = 0.73;
const FOOTER = { text: "Join the waitlist", size: 36, baseline: SHARE_IMAGE_HEIGHT - MARGIN };
const DARK = "#111827";
const CACHE_MAX = 200;

const colorOf = (look: ShareLook) => (/^#[0-9a-f]{6}$/i.test(look.color) ? look.color.toLowerCase() : DARK);
/** One line, without the characters XML 1.0 cannot hold (a lone surrogate becomes U+FFFD). */
const nameOf = (look: ShareLook) =>
  look.name
    .toWellFormed()
    .replace(/[\u0000-\u001f\u007f\ufffe\uffff]/g, " ")
    .replace(/\s+/g, " ")
    .trim() || "Waitlist";

/** WCAG relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** White or dark text, whichever contrasts more with the background (WCAG contrast ratio). */
export function textColorOn(background: string): "#ffffff" | typeof DARK {
  const l = luminance(background);
  return 1.05 / (l + 0.05) >= (l + 0.05) / (luminance(DARK) + 0.05) ? "#ffffff" : DARK;
}

/** Greedy word wrap to `max` px; a word longer than a line is broken between characters. */
function wrap(text: string, size: number, widths: FontWidths, max: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const joined = line ? `${line} ${word}` : word;
    if (widths.width(joined, size) <= max) {
      line = joined;
      continue;
    }
    if (line) lines.push(line);
    line = "";
    for (const ch of word) {
      if (line && widths.width(line + ch, size) > max) {
        lines.push(line);
        line = "";
      }
      line += ch;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** The name's lines and size: the largest size that fits it on MAX_LINES lines, else the smallest and an ellipsis. */
export function nameLayout(name: string, widths: FontWidths): { size: number; lines: string[] } {
  for (const size of SIZES) {
    const lines = wrap(name, size, widths, TEXT_WIDTH);
    if (lines.length <= MAX_LINES) return { size, lines };
  }
  const size = SIZES[SIZES.length - 1];
  const lines = wrap(name, size, widths, TEXT_WIDTH).slice(0, MAX_LINES);
  let last = [...lines[MAX_LINES - 1]];
  while (last.length && widths.width(`${last.join("").trimEnd()}…`, size) > TEXT_WIDTH) last.pop();
  lines[MAX_LINES - 1] = `${last.join("").trimEnd()}…`;
  return { size, lines };
}

/** The image as SVG: every text escaped, the font named as embedded. */
export function shareImageSvg(look: ShareLook, widths: FontWidths): string {
  const background = colorOf(look);
  const ink = textColorOn(background);
  const { size, lines } = nameLayout(nameOf(look), widths);
  const step = size * LINE_HEIGHT;
  // the name centred in the space above the footer, from its first line's capitals to its last line's baseline
  const capitals = size * CAP_HEIGHT;
  const bottom = FOOTER.baseline - FOOTER.size - 60;
  const first = MARGIN + (bottom - MARGIN - (lines.length - 1) * step - capitals) / 2 + capitals;
  const text = lines.map((line, i) => `<text x="${MARGIN}" y="${Math.round(first + i * step)}" font-size="${size}">${escapeHtml(line)}</text>`).join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${SHARE_IMAGE_WIDTH}" height="${SHARE_IMAGE_HEIGHT}" viewBox="0 0 ${SHARE_IMAGE_WIDTH} ${SHARE_IMAGE_HEIGHT}">
<rect width="100%" height="100%" fill="${background}"/>
<g font-family="${FAMILY}" font-weight="700" fill="${ink}">${text}
<rect x="${MARGIN}" y="${FOOTER.baseline - FOOTER.size - 28}" width="72" height="6" rx="3" opacity="0.6"/>
<text x="${MARGIN}" y="${FOOTER.baseline}" font-size="${FOOTER.size}" opacity="0.85">${FOOTER.text}</text>
</g>
</svg>`;
}

let engine: Promise<{ font: Uint8Array; widths: FontWidths }> | null = null;

/** resvg's WebAssembly and the font, loaded on the first drawing (not at start-up: most processes never draw). */
function ready() {
  return (engine ??= (async () => {
    await initWasm(readFileSync(wasmPath));
    const font = new Uint8Array(readFileSync(fontPath));
    return { font, widths: fontWidths(font) };
  })());
}

const drawn = new Map<string, Promise<Uint8Array>>();
const cacheKey = (look: ShareLook) => JSON.stringify([colorOf(look), nameOf(look)]);

/** The PNG, drawn once per (name, colour) and kept (the oldest of CACHE_MAX dropped first). */
export function renderShareImage(look: ShareLook): Promise<Uint8Array> {
  const key = cacheKey(look);
  let png = drawn.get(key);
  if (!png) {
    if (drawn.size >= CACHE_MAX) drawn.delete(drawn.keys().next().value!);
    png = ready().then(({ font, widths }) => {
      const resvg = new Resvg(shareImageSvg(look, widths), { font: { fontBuffers: [font], defaultFontFamily: FAMILY } });
      try {
        const image = resvg.render();
        try {
          return image.asPng();
        } finally {
          image.free();
        }
      } finally {
        resvg.free();
      }
    });
    drawn.set(key, png);
    // a failed drawing is not kept: the next request tries again
    png.catch(() => drawn.get(key) === png && drawn.delete(key));
  }
  return png;
}

/** Draws the image ahead of its first request (a page was published); nothing waits for it and a failure is dropped. */
export function warmShareImage(look: ShareLook): void {
  // after the current answer is on its way: the first drawing of a process also loads resvg (~0.1 s)
  setImmediate(() => renderShareImage(look).catch(() => {}));
}

/** The image's ETag: a hash of what it shows, so every instance gives the same one. */
export const shareImageTag = (look: ShareLook): string =>
  `"${createHash("sha256").update(cacheKey(look)).update(DRAWING).digest("base64url").slice(0, 22)}"`;
