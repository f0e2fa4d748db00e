// The thank-you page /t/{sign_up_token}: position, inflated position, referral link with copy and share buttons.
import type { Waitlist } from "../http/api";
import type { SubscriberRow } from "../subscribers/view";
import { referralLink } from "../waitlists/links";
import { escapeHtml } from "./html";
import { page } from "./layout";
import { publicName, type Leader } from "../subscribers/leaderboard";
import { milestonesOf } from "../waitlists/service";
import { manageSection } from "./link-pages";
import { captchaWidget } from "./captcha-widget";
import { socialImage } from "./hosted";

/** What the status page shows beyond the subscriber itself (issue 11): rewards reached, and the leaderboard if it is on. */
export interface StatusExtras {
  reached: { referrals: number; reward: string }[];
  leaders: Leader[];
}


function rewardsSection(sub: SubscriberRow, w: Waitlist, reached: StatusExtras["reached"]): string {
  const milestones = milestonesOf(w);
  if (!milestones.length) return "";
  const done = new Set(reached.map((r) => r.referrals));
  const count = Number(sub.referral_count);
  const next = milestones.find((m) => !done.has(m.referrals));
  const headline = next
    ? `Next reward: <strong>${escapeHtml(next.reward)}</strong> at ${next.referrals} referral${next.referrals === 1 ? "" : "s"}: ${Math.max(0, next.referrals - count)} more to go.`
    : "You have reached every reward. Thank you for spreading the word!";
  const items = milestones
    .map((m) => `<li class="${done.has(m.referrals) ? "reached" : ""}"><span>${m.referrals} referral${m.referrals === 1 ? "" : "s"}</span><span>${escapeHtml(m.reward)}${done.has(m.referrals) ? " ✓" : ""}</span></li>`)
    .join("");
  return `<section class="rewards" aria-labelledby="rewards-title">
<h2 id="rewards-title">Rewards</h2>
<p id="next-milestone">${headline}</p>
<ul>${items}</ul>
</section>`;
}

function leaderboardSection(leaders: StatusExtras["leaders"]): string {
  if (!leaders.length) return "";
  const rows = leaders.map((l) => `<li><span>${escapeHtml(publicName(l))}</span><span>${Number(l.referral_count)}</span></li>`).join("");
  return `<section class="leaderboard" aria-labelledby="leaders-title">
<h2 id="leaders-title">Top referrers</h2>
<ol>${rows}</ol>
</section>`;
}

function shareLinks(link: string, waitlistName: string) {
  const text = `I just joined the ${waitlistName} waitlist. Join me:`;
  const u = encodeURIComponent(link);
  const t = encodeURIComponent(text);
  return [
    ["X", "x", `https://twitter.com/intent/tweet?text=${t}&url=${u}`],
    ["Facebook", "facebook", `https://www.facebook.com/sharer/sharer.php?u=${u}`],
    ["LinkedIn", "linkedin", `https://www.linkedin.com/sharing/share-offsite/?url=${u}`],
    ["WhatsApp", "whatsapp", `https://wa.me/?text=${encodeURIComponent(`${text} ${link}`)}`],
    ["Email", "email", `mailto:?subject=${encodeURIComponent(`Join the ${waitlistName} waitlist`)}&body=${encodeURIComponent(`${text} ${link}`)}`],
  ] as const;
}

export function thankYouPage(sub: SubscriberRow, w: Waitlist, baseUrl: string, extras: StatusExtras = { reached: [], leaders: [] }): string {
  const position = Number(sub.position);
  const inflated = position + w.positionOffset;
  const link = referralLink(w, sub.referral_code, baseUrl);
  const networks = shareLinks(link, w.name)
    .map(([name, channel, href]) => `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer" data-share="${channel}">${escapeHtml(name)}</a>`)
    .join("");
  const greeting = sub.name ? `You're in, ${sub.name}!` : "You're on the list!";
  return page(
    `You're #${inflated} on the ${w.name} waitlist`,
    `<h1>${escapeHtml(greeting)}</h1>
<p>Thanks for joining the ${escapeHtml(w.name)} waitlist.</p>
<div class="position" id="position" data-position="${position}" data-inflated-position="${inflated}" data-live="/t/${escapeHtml(sub.sign_up_token)}/live" aria-live="polite">#${inflated.toLocaleString("en")}</div>
<div class="label">your place in line</div>
<div class="stats"><span>Referrals: <strong id="referrals">${Number(sub.referral_count)}</strong></span><span>Points: <strong id="points">${Number(sub.points)}</strong></span></div>
<section class="share" aria-labelledby="share-title">
<h2 id="share-title">Move up the list</h2>
<p>Share your personal link. Each friend who joins moves you up.</p>
<div class="copy"><input id="referral-link" type="text" readonly value="${escapeHtml(link)}" aria-label="Your referral link"><button type="button" data-copy="referral-link" data-share="copy">Copy</button></div>
<div class="networks" data-share-url="/t/${escapeHtml(sub.sign_up_token)}/share">${networks}</div>
</section>
${rewardsSection(sub, w, extras.reached)}
${leaderboardSection(extras.leaders)}
${manageSection(sub)}`,
    {
      script: true,
      description: `Your place on the ${w.name} waitlist`,
      // issue 46: shared by mistake or on purpose, the status link shows the waitlist and leads to the referral link
      social: `<meta property="og:type" content="website">
<meta property="og:title" content="${escapeHtml(`Join the ${w.name} waitlist`)}">
<meta property="og:description" content="${escapeHtml(`Join the ${w.name} waitlist, and move up the list by sharing your own link.`)}">
<meta property="og:url" content="${escapeHtml(link)}">
${socialImage(w, baseUrl)}`,
    },
  );
}

/** The "send it again" form (issue 16): a real POST, under the confirmation caps, with the captcha when it is on. */
function resendForm(w: Waitlist): string {
  return `<form class="resend" method="post" action="/pending/${escapeHtml(w.key)}/resend">
<label>Your email<input name="email" type="email" autocomplete="email" required maxlength="254"></label>
${captchaWidget(w)}
<button type="submit">Send the email again</button>
</form>`;
}

export function pendingPage(w: Waitlist): string {
  return page(
    `Confirm your email for ${w.name}`,
    `<h1>Check your inbox</h1>
<p>We sent you an email to confirm your spot on the ${escapeHtml(w.name)} waitlist. Follow the link in it to join the list.</p>
<p><small>Nothing there? Look in your spam folder, or have it sent again:</small></p>
${resendForm(w)}`,
  );
}

/** After "send it again": the same words whatever happened (no oracle). */
export function resendAnswerPage(w: Waitlist, message: string): string {
  return page(
    `Confirm your email for ${w.name}`,
    `<h1>Check your inbox</h1>
<p id="resend-answer">${escapeHtml(message)}</p>
<p><a href="/pending/${escapeHtml(w.key)}">Back</a></p>`,
  );
}

export function awaitingConfirmationPage(w: Waitlist): string {
  return page(
    `Almost there`,
    `<h1>Almost there</h1>
<p>Confirm your email with the link we sent you to take your place on the ${escapeHtml(w.name)} waitlist.</p>`,
  );
}

/** Issue 11: once invited, joined or rejected, the status page says so (with the place that was held). */
export function outOfLinePage(sub: SubscriberRow, w: Waitlist): string {
  const held = sub.final_position === null ? "" : ` You were #${(Number(sub.final_position) + w.positionOffset).toLocaleString("en")} in line.`;
  const [title, text] =
    sub.access === "invited"
      ? ["You're invited!", `Your wait for ${w.name} is over: check your inbox for your invitation link.${held}`]
      : sub.access === "joined"
        ? ["You're in!", `You have joined ${w.name}. Welcome aboard.${held}`]
        : ["You're no longer on the list", `Your place on the ${w.name} waitlist has been withdrawn.`];
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p id="access" data-access="${escapeHtml(sub.access)}">${escapeHtml(text)}</p>\n${manageSection(sub)}`);
}
