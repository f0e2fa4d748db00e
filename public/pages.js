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
