// Copy-to-clipboard for the referral link on the thank-you page (first-party script; CSP script-src 'self').
for (const button of document.querySelectorAll("[data-copy]")) {
  button.addEventListener("click", async () => {
    const input = document.getElementById(button.getAttribute("data-copy"));
    if (!input) return;
    try {
      await navigator.clipboard.writeText(input.value);
    } catch {
      input.select();
      document.execCommand("copy");
    }
    const label = button.textContent;
    button.textContent = "Copied!";
    setTimeout(() => (button.textContent = label), 1500);
  });
}

// Issue 46: a share-button click is counted (on this server only: the click itself leaves as the link says)
const shareUrl = document.querySelector("[data-share-url]")?.getAttribute("data-share-url");
if (shareUrl) {
  for (const button of document.querySelectorAll("[data-share]")) {
    button.addEventListener("click", () => {
      const channel = button.getAttribute("data-share");
      fetch(shareUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ channel }), keepalive: true }).catch(() => {});
    });
  }
}

// The status page keeps its place in line current: every 30 s, and when the visitor comes back to the tab.
const live = document.querySelector("[data-live]");
if (live) {
  const refresh = async () => {
    try {
      const res = await fetch(live.getAttribute("data-live"), { cache: "no-store" });
      if (!res.ok) return;
      const now = await res.json();
      if (now.status !== "waiting" || now.inflated_position === null) return location.reload();
      live.textContent = `#${now.inflated_position.toLocaleString("en")}`;
      live.setAttribute("data-position", String(now.position));
      for (const [id, value] of [["referrals", now.referral_count], ["points", now.points]]) {
        const el = document.getElementById(id);
        if (el) el.textContent = String(value);
      }
    } catch {
      // offline for a moment: the next tick tries again
    }
  };
  setInterval(refresh, 30_000);
  window.addEventListener("focus", refresh);
  document.addEventListener("visibilitychange", () => document.visibilityState === "visible" && refresh());
}
