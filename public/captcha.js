// The ALTCHA widget (issue 16), all from this server: the widget without bundled workers, and its
// proof-of-work worker registered from a same-origin file, so our pages need no blob: workers or inline
// styles in their CSP. On a team's own site (another origin) a worker must be same-origin, so there it
// is a small blob that loads ours.
import "./altcha.js";

const script = new URL("./pbkdf2.js", import.meta.url);
const worker = () =>
  script.origin === location.origin
    ? new Worker(script)
    : new Worker(URL.createObjectURL(new Blob([`importScripts(${JSON.stringify(script.href)});`], { type: "text/javascript" })));
globalThis.$altcha.algorithms.set("PBKDF2/SHA-256", worker);
