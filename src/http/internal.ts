// Who may ask /internal/* (issue 16). Behind a reverse proxy every request comes from loopback, so the
// socket says nothing there: the shared INTERNAL_TOKEN decides; without one, only a direct local caller may.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Server } from "bun";
import type { Config } from "../config";
import { clientIp } from "./client-ip";

const digest = (value: string) => createHash("sha256").update(value).digest();

export function mayAskInternal(request: Request, server: Server<unknown> | null | undefined, token: string | undefined, config: Pick<Config, "internalToken" | "trustProxy">): boolean {
  if (config.internalToken) return token !== undefined && timingSafeEqual(digest(token), digest(config.internalToken));
  // TRUST_PROXY says a proxy is in front: its requests come from loopback too, so loopback proves nothing
  if (config.trustProxy) return false;
  const peer = clientIp(request, server, false);
  return peer.startsWith("127.") || peer === "::1";
}
