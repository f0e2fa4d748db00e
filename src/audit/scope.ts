// Issue 48: the audit row of a change is written in the change's own transaction. A request that may change something
// (an API call other than GET, HEAD and the visitors' own events) runs in a scope of its own; once its key is known the
// guard leaves there what the audit row will say (`expectAudit`), and the first write the request makes through the Db
// facade takes it into its transaction (writes.ts). A request that writes nothing records nothing; one whose change
// fails rolls its audit row back with it. The scope closes with the response: work the request left running (an
// import's job) writes no audit row of its own.
import { AsyncLocalStorage } from "node:async_hooks";

export interface Actor {
  type: "key" | "user";
  id: string;
  name: string;
}

export interface AuditEntry {
  accountId: string;
  actor: Actor;
  action: string;
  target: string | null;
  ip: string | null;
  userAgent: string | null;
}

interface Scope {
  entry: AuditEntry | null;
  closed: boolean;
}

const scopes = new AsyncLocalStorage<Scope>();

/** Opens the request's scope: called synchronously at its start (onRequest), so all it does runs inside. */
export function openScope(): void {
  scopes.enterWith({ entry: null, closed: false });
}

/** What the request's change will be recorded as (the guard, once the key is known). */
export function expectAudit(entry: AuditEntry): void {
  const scope = scopes.getStore();
  if (scope && !scope.closed) scope.entry = entry;
}

/** Names the target once it is known (a new key's id): the entry not yet written is changed. */
export function setTarget(target: string): void {
  const entry = scopes.getStore()?.entry;
  if (entry) entry.target = target;
}

/** The entry the next write carries, once: null outside a scope, after the first write, and after the response. */
export function take(): AuditEntry | null {
  const scope = scopes.getStore();
  if (!scope || scope.closed || !scope.entry) return null;
  const entry = scope.entry;
  scope.entry = null;
  return entry;
}

/** A write that took the entry failed (its transaction rolled back): the next one carries it. */
export function putBack(entry: AuditEntry): void {
  const scope = scopes.getStore();
  if (scope && !scope.closed && !scope.entry) scope.entry = entry;
}

/** The response went out: nothing started by the request writes an audit row after it. */
export function closeScope(): void {
  const scope = scopes.getStore();
  if (scope) {
    scope.closed = true;
    scope.entry = null;
  }
}

/** Runs `fn` outside any request's scope: what it schedules (a coalesced write of many requests) records nothing. */
export const outsideScopes = <T>(fn: () => T): T => scopes.exit(fn);
