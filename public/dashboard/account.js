// The signed-in account as GET /me shows it (plan, credits), shared by the header and the views.
import { api } from "./api.js";

const listeners = [];

export const account = {
  me: null,
  async refresh() {
    this.me = (await api("GET", "/api/v1/me")).data;
    for (const listener of listeners) listener(this.me);
    return this.me;
  },
  clear() {
    this.me = null;
    for (const listener of listeners) listener(null);
  },
  onChange(listener) {
    listeners.push(listener);
  },
};
