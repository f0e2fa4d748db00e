// Tag endpoints (DESIGN §4 extension): list/create/delete tags, tag and untag subscribers.
import { SAME_NAME } from "../db/fold";
import { Elysia, t } from "elysia";
import { Text } from "../http/schema";
import type { Config } from "../config";
import type { Db } from "../db/db";
import { TAG_COLORS } from "../db/schema";
import type { apiGuard } from "../http/api";
import { errorResponses } from "../http/error-schemas";
import type { Dispatch } from "../outbox/events";
import { SubscriberResponse } from "../subscribers/model";
import { getSubscriber } from "../subscribers/query";
import { createTag, deleteTag, listTags, tagSubscriber, TAG_NAME_MAX, untagSubscriber } from "./service";

const Tag = t.Object({ id: t.String(), name: t.String(), color: t.String() });
const Color = t.Union(TAG_COLORS.map((c) => t.Literal(c)));

export function tagRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard>; dispatch: Dispatch }) {
  const { db, config, dispatch } = deps;
  const policy = { key: "any", bucket: "subscribers", minPlan: "growth" } as const;
  return new Elysia({ name: "tags/routes", prefix: "/api/v1/waitlist/:waitlistKey" })
    .use(deps.api)
    .get("/tags", async ({ auth }) => ({ success: true, data: { tags: await listTags(db, auth.waitlist!.id) } }), {
      api: policy,
      params: t.Object({ waitlistKey: t.String() }),
      response: { 200: t.Object({ success: t.Boolean(), data: t.Object({ tags: t.Array(t.Object({ ...Tag.properties, subscribers: t.Number() })) }) }), ...errorResponses(401, 403, 429) },
      detail: { tags: ["Tags"], summary: "List tags" },
    })
    .post(
      "/tags",
      async ({ auth, body, set }) => {
        const tag = await createTag(db, auth.waitlist!.id, body);
        set.status = 201;
        return { success: true, data: { tag } };
      },
      {
        api: policy,
        params: t.Object({ waitlistKey: t.String() }),
        body: t.Object({ name: Text({ maxLength: TAG_NAME_MAX }), color: t.Optional(Color) }, { additionalProperties: false }),
        response: { 201: t.Object({ success: t.Boolean(), data: t.Object({ tag: Tag }) }), ...errorResponses(400, 401, 403, 409, 429) },
        detail: { tags: ["Tags"], summary: "Create a tag", description: `Colors: ${TAG_COLORS.join(", ")} (default gray). Names are unique per waitlist, ${SAME_NAME}.` },
      },
    )
    .delete("/tags/:tagId", async ({ auth, params }) => deleteTag(db, auth.waitlist!.id, params.tagId), {
      api: policy,
      params: t.Object({ waitlistKey: t.String(), tagId: t.String({ description: "Tag id or name" }) }),
      response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), ...errorResponses(401, 403, 404, 429) },
      detail: { tags: ["Tags"], summary: "Delete a tag", description: "Removes it from every subscriber." },
    })
    .post(
      "/subscribers/:idOrEmail/tags",
      async ({ auth, params, body }) => {
        const id = await tagSubscriber(db, auth.waitlist!, params.idOrEmail, body.tags, config.baseUrl, dispatch);
        return { success: true, data: { subscriber: await getSubscriber(db, auth.waitlist!, id, config.baseUrl) } };
      },
      {
        api: policy,
        params: t.Object({ waitlistKey: t.String(), idOrEmail: t.String() }),
        body: t.Object({ tags: t.Array(Text({ maxLength: TAG_NAME_MAX }), { minItems: 1, maxItems: 20, description: "Tag ids or names; unknown names become new tags" }) }, { additionalProperties: false }),
        response: { 200: SubscriberResponse, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: { tags: ["Tags"], summary: "Tag a subscriber" },
      },
    )
    .delete(
      "/subscribers/:idOrEmail/tags/:tagIdOrName",
      async ({ auth, params }) => {
        const id = await untagSubscriber(db, auth.waitlist!, params.idOrEmail, params.tagIdOrName, config.baseUrl, dispatch);
        return { success: true, data: { subscriber: await getSubscriber(db, auth.waitlist!, id, config.baseUrl) } };
      },
      {
        api: policy,
        params: t.Object({ waitlistKey: t.String(), idOrEmail: t.String(), tagIdOrName: t.String() }),
        response: { 200: SubscriberResponse, ...errorResponses(401, 403, 404, 429) },
        detail: { tags: ["Tags"], summary: "Untag a subscriber" },
      },
    );
}
