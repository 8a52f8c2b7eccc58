import fc from "fast-check";
import { InvalidArgumentError } from "../../src/domain/errors.js";
import { narrowScopeResources, resolveScopeResources, type ScopeLink } from "../../src/domain/scope-resolution.js";

// Random registries: a DAG over up to 25 resources, each linked into some of three projects (b/r is a
// project the caller's key does not allow), with aliases that collide across projects on purpose.
const PROJECTS = ["a/p", "a/q", "b/r"];
const idOf = (i: number) => `01J${String(i).padStart(23, "0")}`;

interface World {
  n: number;
  parents: number[][];
  links: ScopeLink[];
}

const world: fc.Arbitrary<World> = fc.integer({ min: 1, max: 25 }).chain((n) =>
  fc
    .tuple(
      fc.array(fc.array(fc.nat(), { maxLength: 3 }), { minLength: n, maxLength: n }),
      fc.array(fc.subarray(PROJECTS, { minLength: 1 }), { minLength: n, maxLength: n }),
      fc.array(fc.integer({ min: 0, max: 5 }), { minLength: n, maxLength: n }),
    )
    .map(([rawParents, projects, aliasNo]) => ({
      n,
      parents: rawParents.map((ps, i) => (i === 0 ? [] : [...new Set(ps.map((p) => p % i))])),
      links: projects.flatMap((ps, i) => ps.map((project) => ({ project, resourceId: idOf(i), alias: `x${aliasNo[i]}` }))),
    }))
    // Aliases are unique per project in a real registry: keep the first link of each (project, alias).
    .map((w) => {
      const seen = new Set<string>();
      return {
        ...w,
        links: w.links.filter((l) => !seen.has(`${l.project}|${l.alias}`) && seen.add(`${l.project}|${l.alias}`) !== undefined),
      };
    }),
);

function toolsFor(w: World) {
  const children = new Map<string, string[]>();
  w.parents.forEach((ps, i) => ps.forEach((p) => children.set(idOf(p), [...(children.get(idOf(p)) ?? []), idOf(i)])));
  const withDescendants = async (ids: readonly string[]): Promise<Set<string>> => {
    const out = new Set<string>();
    const stack = [...ids];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (out.has(id)) continue;
      out.add(id);
      stack.push(...(children.get(id) ?? []));
    }
    return out;
  };
  const isVisible = (id: string) => w.links.some((l) => l.resourceId === id && l.project.startsWith("a/"));
  return { withDescendants, visible: async (id: string) => isVisible(id), isVisible };
}

const names = (w: World) =>
  fc.array(
    fc.oneof(
      fc.nat({ max: w.n - 1 }).map(idOf),
      fc.integer({ min: 0, max: 5 }).map((a) => `x${a}`),
    ),
    { maxLength: 4 },
  );

const scopeProjects = fc.subarray(["a/p", "a/q"], { minLength: 1 });

test("resolution never reaches past the linked resources and their visible descendants; kept and denied are disjoint", async () => {
  await fc.assert(
    fc.asyncProperty(
      world.chain((w) => fc.tuple(fc.constant(w), scopeProjects, names(w), names(w), fc.boolean())),
      async ([w, projects, includeResources, excludeResources, expandDescendants]) => {
        const { withDescendants, visible, isVisible } = toolsFor(w);
        const links = w.links.filter((l) => projects.includes(l.project));
        let r;
        try {
          r = await resolveScopeResources({
            projects,
            links,
            withDescendants,
            visible,
            includeResources,
            excludeResources,
            expandDescendants,
          });
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidArgumentError);
          return;
        }
        const linked = new Set(links.map((l) => l.resourceId));
        for (const id of [...r.resourceIds, ...r.deniedResourceIds]) expect(linked.has(id) || isVisible(id)).toBe(true);
        expect(r.resourceIds.filter((id) => r.deniedResourceIds.includes(id))).toEqual([]);
        expect(r.resourceIds).toEqual([...new Set(r.resourceIds)].sort());
        const wider = await resolveScopeResources({
          projects,
          links,
          withDescendants,
          visible,
          includeResources,
          excludeResources: [],
          expandDescendants,
        });
        for (const id of r.resourceIds) expect(wider.resourceIds).toContain(id);
      },
    ),
    { numRuns: 300 },
  );
});

test("narrowing never widens: the child is within the parent, and child plus denied is exactly the parent", async () => {
  await fc.assert(
    fc.asyncProperty(
      world.chain((w) =>
        fc.tuple(
          fc.constant(w),
          fc.subarray(["a/p", "a/q"], { minLength: 1 }),
          fc.array(fc.nat({ max: w.n + 3 }).map(idOf), { maxLength: 5 }),
          fc.boolean(),
        ),
      ),
      async ([w, childProjects, denyResourceIds, expandDescendants]) => {
        const { withDescendants, visible } = toolsFor(w);
        const parentProjects = ["a/p", "a/q"];
        const parent = await resolveScopeResources({
          projects: parentProjects,
          links: w.links.filter((l) => parentProjects.includes(l.project)),
          withDescendants,
          visible,
          includeResources: [],
          excludeResources: [],
          expandDescendants,
        });
        const child = await narrowScopeResources({
          parentResourceIds: parent.resourceIds,
          parentProjects,
          childProjects,
          childLinks: w.links.filter((l) => childProjects.includes(l.project)),
          withDescendants,
          denyResourceIds,
          expandDescendants,
        });
        for (const id of child.resourceIds) expect(parent.resourceIds).toContain(id);
        expect([...child.resourceIds, ...child.deniedResourceIds].sort()).toEqual(parent.resourceIds);
        for (const id of denyResourceIds) if (parent.resourceIds.includes(id)) expect(child.resourceIds).not.toContain(id);
      },
    ),
    { numRuns: 300 },
  );
});
