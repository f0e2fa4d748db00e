// Landing-page backgrounds: a hex color or a CSS gradient, parsed and re-emitted in a canonical form,
// so what reaches the page's CSS is built by us, never pasted from the request.
import { badRequest } from "../http/errors";
import { anyCase } from "../http/schema";

export interface Background {
  type: "color" | "gradient";
  value: string;
}

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
const MAX_STOPS = 10;

function color(raw: string): string | null {
  const c = raw.trim().toLowerCase();
  if (HEX.test(c)) return c;
  const m = c.match(/^rgba?\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*(?:,\s*(0|1|0?\.\d+|1\.0+)\s*)?\)$/);
  if (!m) return null;
  const [r, g, b] = [m[1], m[2], m[3]].map(Number);
  if ([r, g, b].some((v) => v > 255)) return null;
  return m[4] === undefined ? `rgb(${r}, ${g}, ${b})` : `rgba(${r}, ${g}, ${b}, ${Number(m[4])})`;
}

/** Splits on commas outside parentheses. */
function args(inner: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of inner) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (depth < 0) return [];
    if (ch === "," && depth === 0) {
      out.push(current.trim());
      current = "";
    } else current += ch;
  }
  out.push(current.trim());
  return depth === 0 ? out : [];
}

function stop(raw: string): string | null {
  // a color may span lines (rgb( with newlines in it): `s`
  const m = raw.match(/^(.*?)(?:\s+(\d{1,3}(?:\.\d+)?)%)?$/s);
  if (!m) return null;
  const c = color(m[1]);
  if (!c) return null;
  if (m[2] === undefined) return c;
  const pct = Number(m[2]);
  return pct <= 100 ? `${c} ${pct}%` : null;
}

const SIDES = /^to (top|bottom|left|right)(?: (top|bottom|left|right))?$/;

function gradient(raw: string): string | null {
  const m = raw.trim().toLowerCase().match(/^(linear|radial)-gradient\((.*)\)$/s);
  if (!m) return null;
  const parts = args(m[2]);
  if (parts.length < 2) return null;
  let head: string | null = null;
  if (m[1] === "linear") {
    const angle = parts[0].match(/^(-?\d{1,3}(?:\.\d+)?)deg$/);
    if (angle) head = `${Number(angle[1])}deg`;
    else if (SIDES.test(parts[0])) head = parts[0].replace(/\s+/g, " ");
  } else if (/^(circle|ellipse)(?: at center)?$/.test(parts[0])) {
    head = parts[0];
  }
  const stops = (head ? parts.slice(1) : parts).map(stop);
  if (stops.length < 2 || stops.length > MAX_STOPS || stops.some((s) => s === null)) return null;
  return `${m[1]}-gradient(${[head, ...stops].filter(Boolean).join(", ")})`;
}

// The same grammar as patterns, for the document (landing/model.ts): what they match, the parser above takes.
const N255 = String.raw`(?:[01]?\d{1,2}|2[0-4]\d|25[0-5])`;
const ALPHA = String.raw`(?:0|1|0?\.\d+|1\.0+)`;
const COLOR = String.raw`(?:#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})|${anyCase("rgb")}[Aa]?\(\s*${N255}\s*,\s*${N255}\s*,\s*${N255}\s*(?:,\s*${ALPHA}\s*)?\))`;
const PERCENT = String.raw`(?:100(?:\.0+)?|0?\d{1,2}(?:\.\d+)?)`;
const STOP = String.raw`${COLOR}(?:\s+${PERCENT}%)?`;
const SIDE = `(?:${["top", "bottom", "left", "right"].map(anyCase).join("|")})`;
const LINEAR_HEAD = String.raw`(?:-?\d{1,3}(?:\.\d+)?${anyCase("deg")}|${anyCase("to")} ${SIDE}(?: ${SIDE})?)`;
const RADIAL_HEAD = String.raw`(?:${anyCase("circle")}|${anyCase("ellipse")})(?: ${anyCase("at center")})?`;
const STOPS = String.raw`${STOP}(?:\s*,\s*${STOP}){1,${MAX_STOPS - 1}}`;
export const COLOR_PATTERN = String.raw`^\s*${COLOR}\s*$`;
export const GRADIENT_PATTERN = String.raw`^\s*(?:${anyCase("linear-gradient")}\(\s*(?:${LINEAR_HEAD}\s*,\s*)?${STOPS}\s*\)|${anyCase("radial-gradient")}\(\s*(?:${RADIAL_HEAD}\s*,\s*)?${STOPS}\s*\))\s*$`;

export function parseBackground(input: { type: string; value: string }): Background {
  if (input.type === "color") {
    const value = color(input.value);
    if (!value) throw badRequest("background.value must be a hex color like #4f46e5 (or rgb()/rgba()) when background.type is color");
    return { type: "color", value };
  }
  if (input.type === "gradient") {
    const value = gradient(input.value);
    if (!value) throw badRequest(`background.value must be a CSS linear-gradient() or radial-gradient() of 2 to ${MAX_STOPS} hex or rgb() colors`);
    return { type: "gradient", value };
  }
  throw badRequest("background.type must be color or gradient");
}
