/** The temporal settings a scope may carry. */
export const TEMPORAL_SCOPES = ["current", "recent", "all"] as const;
export type TemporalScope = (typeof TEMPORAL_SCOPES)[number];

/**
 * A stored, immutable scope, as the domain sees it. `resourceIds` is the effective set (after allow,
 * deny and narrowing); `deniedResourceIds` records what deny lists removed, so that a scope whose every
 * resource was denied can be told from one whose projects simply hold nothing.
 */
export interface ResourceScope {
  scopeId: string;
  /** The principal that made the scope; nobody else may use or see it. */
  owner: string;
  resourceIds: readonly string[];
  projectNames: readonly string[];
  temporalScope: TemporalScope;
  includeResources: readonly string[];
  excludeResources: readonly string[];
  includePaths: readonly string[];
  excludePaths: readonly string[];
  parentScopeId: string;
  expandDescendants: boolean;
  deniedResourceIds: readonly string[];
  createdAt: Date;
}
