// The signed-in account as GET /me shows it (plan, credits), and the signed-in user (issue 48: GET /session; none for
// an account key, which acts as an owner), shared by the header and the views.
import { api, session } from "./api.js";

const listeners = [];

export const account = {
  me: null,
  /** The signed-in user, or null with an account key. */
  user: null,
  get role() {
    return this.user?.role ?? "owner";
  },
  async refresh() {
    const asUser = !session.key && session.csrf;
    const [me, user] = await Promise.all([api("GET", "/api/v1/me"), asUser ? api("GET", "/api/v1/session") : null]);
    this.me = me.data;
    this.user = user?.data.user ?? null;
    for (const listener of listeners) listener(this.me);
    return this.me;
  },
  clear() {
    this.me = null;
    this.user = null;
    for (const listener of listeners) listener(null);
  },
  onChange(listener) {
    listeners.push(listener);
  },
};
