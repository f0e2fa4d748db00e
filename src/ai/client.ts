// Calls any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, llama.cpp, vLLM): one call, no automatic retry.
import type { Config } from "../config";
import { completionText } from "./reply";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export class UpstreamFailed extends Error {}
export class UpstreamTimedOut extends Error {}

/** The reply text; throws UpstreamTimedOut past AI_TIMEOUT_MS and UpstreamFailed otherwise (never with the upstream's body). */
export async function chat(config: Config, messages: ChatMessage[]): Promise<string> {
  const url = `${config.aiBaseUrl!.replace(/\/+$/, "")}/chat/completions`;
  const signal = AbortSignal.timeout(config.aiTimeoutMs);
  let res: Response;
  let body: string;
  try {
    res = await fetch(url, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(config.aiApiKey ? { authorization: `Bearer ${config.aiApiKey}` } : {}) },
      body: JSON.stringify({ model: config.aiModel ?? "gpt-4o-mini", messages, temperature: 0.7, stream: false }),
    });
    body = await res.text();
  } catch (err) {
    const name = (err as Error)?.name;
    if (name === "TimeoutError" || name === "AbortError") throw new UpstreamTimedOut("the model did not answer in time");
    throw new UpstreamFailed("could not reach the model endpoint");
  }
  if (!res.ok) throw new UpstreamFailed(`the model endpoint answered ${res.status}`);
  const text = completionText(body, res.headers.get("content-type") ?? "");
  if (!text) throw new UpstreamFailed("the model's answer had no content");
  return text;
}
