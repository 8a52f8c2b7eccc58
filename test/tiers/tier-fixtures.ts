import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { newUlid } from "../../src/domain/ulid-id.js";
import { viewOver } from "../support/view-over.js";

/** A scoped view over `projects` and `resourceIds` owned by `owner`, as the access interceptor would build it. */
export function scopeView(projects: string[], resourceIds: string[] = [], owner = "test"): ScopedBackendView {
  return viewOver(resourceIds, { scopeId: newUlid(), owner, projectNames: projects, createdAt: new Date() });
}

/** Words enough for `n` sentences of distinct, summarisable prose. */
export function prose(n: number, topic = "cache"): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`Sentence ${i} explains how the ${topic} keeps item ${i} near the agent while budgets hold.`);
  return out.join(" ");
}
