// The ALTCHA widget (issue 16), all from this server: the widget without bundled workers, and its
// proof-of-work worker registered from a same-origin file, so pages need no blob: workers or inline styles in their CSP.
import "/assets/altcha/altcha.js";

const worker = () => new Worker("/assets/altcha/pbkdf2.js");
globalThis.$altcha.algorithms.set("PBKDF2/SHA-256", worker);
