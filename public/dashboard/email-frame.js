// The frame an email preview is shown in (issue 45): the page that embeds it posts the email's HTML, which replaces
// this document's head and body. The frame is sandboxed without same-origin (it cannot reach the dashboard or its
// key) and served with a CSP of its own that lets the email's inline styles apply and runs no script of the email.
addEventListener("message", (event) => {
  if (event.source !== parent || typeof event.data !== "string") return;
  const doc = new DOMParser().parseFromString(event.data, "text/html");
  document.head.replaceChildren(...doc.head.childNodes);
  // the script is deferred, so the body is parsed before "ready" is posted; the check keeps an early message harmless
  if (document.body) document.body.replaceWith(doc.body);
  else document.documentElement.append(doc.body);
});
parent.postMessage("email-frame-ready", "*");
