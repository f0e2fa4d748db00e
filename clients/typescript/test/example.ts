// The README's example as code, so the compiler checks it against the API's types (not run by the tests).
import { createWaitlistClient, verifyWebhook } from "../src/index";

export async function example() {
  const waitlist = createWaitlistClient({ baseUrl: "https://waitlist.example.com", apiKey: process.env.WAITLIST_KEY! });

  // sign someone up: the body and the answer are typed
  const { data, error, response } = await waitlist.POST("/api/v1/waitlist/{waitlistKey}/sign-up", {
    params: { path: { waitlistKey: "YOUR_WAITLIST_KEY" } },
    body: { email: "ada@example.com", name: "Ada", metadata: { referred_by: "CODE" } },
  });
  if (error) throw new Error(`${response.status}: ${JSON.stringify(error)}`);
  console.log(`Ada is number ${data.position}; her referral code: ${data.referral_code}`);

  // a webhook receiver: verify the raw body before trusting it
  Bun.serve({
    async fetch(request) {
      const raw = await request.text();
      try {
        const event = verifyWebhook(process.env.WAITLIST_WEBHOOK_SECRET!, raw, request.headers); // whsec_...
        console.log(event.type, event.data); // deduplicate on event.id: a retry carries the same one
        return new Response("ok");
      } catch {
        return new Response("bad signature", { status: 401 });
      }
    },
  });
}
