// Reading the model's answer leniently (DESIGN §4 AI pages): a bare JSON object, the first ```json fence,
// or the first balanced {...} in the text; from a plain or a streamed (SSE) chat-completions response.

export interface GeneratedPage {
  title: string;
  description: string;
  style: string;
  primary_color: string;
  html: string;
}

/** The first balanced {...} object in `text`, respecting strings. */
function firstObject(text: string): string | null {
  const start = text.indexOf("{");
  if (start < 0) return null;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}

export function parseGeneratedPage(text: string): GeneratedPage | null {
  const candidates = [text.trim(), text.match(/```(?:json)?\s*\n?([\s\S]*?)```/i)?.[1], firstObject(text)];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      const value = JSON.parse(candidate);
      if (value && typeof value === "object" && typeof value.html === "string" && value.html.trim()) {
        const str = (v: unknown) => (typeof v === "string" ? v : "");
        return { title: str(value.title), description: str(value.description), style: str(value.style), primary_color: str(value.primary_color), html: value.html };
      }
    } catch {}
  }
  return null;
}

/** The assistant's text from a chat-completions response body, streamed (text/event-stream) or not. */
export function completionText(body: string, contentType: string): string | null {
  if (contentType.includes("text/event-stream") || body.trimStart().startsWith("data:")) {
    let out = "";
    for (const line of body.split(/\r?\n/)) {
      const data = line.match(/^data:\s?(.*)$/)?.[1];
      if (!data || data === "[DONE]") continue;
      try {
        const chunk = JSON.parse(data);
        out += chunk?.choices?.[0]?.delta?.content ?? chunk?.choices?.[0]?.message?.content ?? "";
      } catch {}
    }
    return out || null;
  }
  try {
    const json = JSON.parse(body);
    const content = json?.choices?.[0]?.message?.content;
    return typeof content === "string" ? content : null;
  } catch {
    return null;
  }
}
