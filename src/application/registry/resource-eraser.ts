import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from "../../domain/errors.js";
import { mayWrite, type Principal } from "../../domain/principal.js";
import { assertProjectName } from "../../domain/project-name.js";
import { scopeViolation } from "../../domain/scope-violation.js";
import { resourceIdProblem } from "../../domain/ulid-id.js";
import type { DocumentStore } from "../../ports/document-store.js";
import type { GraphBackend } from "../../ports/graph-backend.js";
import type { RegistryStore } from "../../ports/registry-store.js";
import type { Indexer } from "../indexing/indexer.js";
import type { TierService } from "../tiers/tier-service.js";

/** What an erasure removed, per kind (the wire's ErasureReport). */
export interface ErasureReport {
  /** Document versions (every retained version counts). */
  documents: number;
  chunks: number;
  /** Chunk versions that carried an embedding. */
  vectors: number;
  triples: number;
  fragments: number;
  /** Project links (aliases) removed. */
  links: number;
  /** Cold-tier fragment copies removed (files under the data directory on the embedded engines). */
  files: number;
  /** The index generation once the erasure was complete. */
  indexGeneration: bigint;
  /** The resources erased. */
  resourceIds: string[];
}

/** What the eraser works on. */
export interface ResourceEraserDeps {
  registry: RegistryStore;
  indexer: Indexer;
  documents: DocumentStore;
  graph?: GraphBackend;
  tiers: TierService;
  /** Where a failed background erasure (resumed at start) is reported. */
  log?: (message: string) => void;
}

function emptyReport(): ErasureReport {
  return { documents: 0, chunks: 0, vectors: 0, triples: 0, fragments: 0, links: 0, files: 0, indexGeneration: 0n, resourceIds: [] };
}

function addInto(total: ErasureReport, r: ErasureReport): void {
  total.documents += r.documents;
  total.chunks += r.chunks;
  total.vectors += r.vectors;
  total.triples += r.triples;
  total.fragments += r.fragments;
  total.links += r.links;
  total.files += r.files;
  total.resourceIds.push(...r.resourceIds);
  if (r.indexGeneration > total.indexGeneration) total.indexGeneration = r.indexGeneration;
}

/**
 * DeleteResource and DeleteProject: erasure of a resource everywhere it lives, crash-safe.
 *
 * 1. Intent: one registry transaction removes the resource's links (aliases) in every project and every
 *    parent edge naming it (its children lose it as a parent; a DAG edge never dangles) and marks it
 *    erasing. From that commit on, no listing, alias, scope resolution or access check finds it (only its
 *    owner's retried DeleteResource may name it), and `erasing` hides it from views of stored scopes in
 *    this process until the data is gone.
 * 2. Work, in slices on the indexer's write section of the resource: document versions, chunks, keyword
 *    rows and vectors (see Indexer.eraseResource); then the graph (typed-literal copies and snapshots
 *    included) and the tier fragments naming it (cold files included).
 * 3. The registry row goes, and the engines reclaim the erased bytes (checkpoint, vacuum).
 * A crash anywhere leaves the intent recorded: `resumePending` (at start) and a retried DeleteResource
 * complete it; every step is idempotent. Concurrent calls for one resource share one erasure.
 * @example const report = await eraser.deleteResource(principal, "01J…");
 */
export class ResourceEraser {
  /** Resources whose erasure runs in this process: stored scopes' views leave them out meanwhile. */
  readonly erasing = new Set<string>();
  private readonly running = new Map<string, Promise<ErasureReport>>();

  constructor(private readonly deps: ResourceEraserDeps) {}

  /**
   * Erases resource `resourceId`. Needs write access to its owning project: a key that may not write it
   * (it can only read it, or it is merely linked into a project of the key) is refused with the same
   * ScopeViolation as an id that does not exist, so nothing is revealed.
   */
  async deleteResource(principal: Principal, resourceId: string): Promise<ErasureReport> {
    if (resourceId.length === 0) throw InvalidArgumentError.field("resource_id", "must not be empty");
    const problem = resourceIdProblem(resourceId);
    if (problem) throw InvalidArgumentError.field("resource_id", problem);
    const record = await this.deps.registry.getResource(resourceId);
    if (!principal.write || !mayWrite(principal, record)) {
      throw scopeViolation({ available: principal.projects, resources: [resourceId], of: `key "${principal.name}"` });
    }
    return this.erase(resourceId);
  }

  /**
   * Deletes project `name`: FAILED_PRECONDITION while it owns resources unless `cascade`, which erases each
   * of them first. Links of other projects' resources into it go with it, and so do the tier fragments
   * held in it. The report sums everything.
   */
  async deleteProject(principal: Principal, name: string, cascade: boolean): Promise<ErasureReport> {
    assertProjectName("name", name);
    if (!principal.write || !principal.allowsProject(name))
      throw scopeViolation({ available: principal.projects, projects: [name], of: `key "${principal.name}"` });
    if (!(await this.deps.registry.getProject(name))) throw new NotFoundError(`project ${name} not found`);
    const owned = await this.ownedBy(name);
    if (owned.length > 0 && !cascade) {
      throw new FailedPreconditionError(
        `project ${name} owns ${owned.length} resource(s): delete them first, or set cascade to erase them too`,
      );
    }
    const total = emptyReport();
    for (const id of owned) addInto(total, await this.erase(id));
    const { links } = await this.deps.registry.deleteProject(name);
    total.links += links;
    const tiers = await this.deps.tiers.eraseFragments({ projectName: name });
    total.fragments += tiers.fragments;
    total.files += tiers.files;
    total.indexGeneration = await this.deps.documents.generation();
    return total;
  }

  /**
   * Hides every resource a crash left mid-erasure from stored scopes' views (called before the server
   * listens, so no call sees a half-erased resource), answering how many there are.
   */
  async hidePending(): Promise<number> {
    const pending = await this.deps.registry.pendingErasures();
    for (const intent of pending) this.erasing.add(intent.resourceId);
    return pending.length;
  }

  /** Completes every erasure a crash interrupted (called once at start, in the background). */
  async resumePending(): Promise<number> {
    const pending = await this.deps.registry.pendingErasures();
    // Hidden from stored scopes' views at once, not only when their turn comes.
    for (const intent of pending) this.erasing.add(intent.resourceId);
    for (const intent of pending) {
      try {
        await this.erase(intent.resourceId);
      } catch (err) {
        this.deps.log?.(
          `acms: the erasure of resource ${intent.resourceId} could not be completed (it is retried at the next start or by DeleteResource): ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    return pending.length;
  }

  /**
   * Erases the graph of every resource the registry no longer knows (called at start, after resumePending,
   * in the background), answering how many. A PutTriples that reached the graph after an erasure removed it
   * erases it again once it sees the erasure (Indexer.putTriples); a crash in between leaves that graph
   * behind, and this removes it. A resource being erased is resumePending's. Only on a graph store of this
   * deployment alone (GraphBackend.resourceIds): a SPARQL endpoint may hold other deployments' graphs.
   */
  async sweepOrphanGraphs(): Promise<number> {
    const graph = this.deps.graph;
    if (!graph?.resourceIds) return 0;
    let swept = 0;
    for (const id of await graph.resourceIds()) {
      if ((await this.deps.registry.resourceState(id)) !== undefined) continue;
      await graph.eraseResource(id);
      swept++;
    }
    return swept;
  }

  /** The resources project `name` owns, erasing ones included. */
  private async ownedBy(name: string): Promise<string[]> {
    const ids = new Set<string>();
    for (const r of await this.deps.registry.listResources(name)) if (r.ownerProject === name) ids.add(r.id);
    for (const p of await this.deps.registry.pendingErasures()) if (p.ownerProject === name) ids.add(p.resourceId);
    return [...ids].sort();
  }

  private erase(resourceId: string): Promise<ErasureReport> {
    const running = this.running.get(resourceId);
    if (running) return running;
    this.erasing.add(resourceId);
    const run = this.eraseNow(resourceId).finally(() => {
      this.running.delete(resourceId);
      this.erasing.delete(resourceId);
    });
    this.running.set(resourceId, run);
    return run;
  }

  private async eraseNow(resourceId: string): Promise<ErasureReport> {
    const { registry, indexer, documents, graph, tiers } = this.deps;
    const intent = await registry.beginErasure(resourceId);
    if (!intent) throw new NotFoundError(`resource ${resourceId} not found`);
    const rows = await indexer.eraseResource(resourceId);
    const triples = graph ? await graph.eraseResource(resourceId) : 0;
    const fragments = await tiers.eraseFragments({ resourceId });
    await registry.finishErasure(resourceId);
    try {
      await documents.reclaimSpace();
    } catch (err) {
      this.deps.log?.(`acms: space held by erased rows could not be reclaimed now: ${err instanceof Error ? err.message : String(err)}`);
    }
    return {
      ...rows,
      triples,
      fragments: fragments.fragments,
      files: fragments.files,
      links: intent.links,
      indexGeneration: await documents.generation(),
      resourceIds: [resourceId],
    };
  }
}
