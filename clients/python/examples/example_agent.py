#!/usr/bin/env python3
"""An example agent on the ACMS Python client (blocking).

It ingests nothing: it works on what `acms ingest` (or another writer) put in a project. It resolves a
scope over the project, runs a hybrid search, fetches the hits' content in rank order, keeps notes in the
context tiers, and shows that a request outside its scope is refused with the offending ids.

Environment, as the acms CLI reads it: ACMS_URL, else http://ACMS_HOST:ACMS_PORT (defaults 127.0.0.1 and
50051); ACMS_API_KEY (required); ACMS_PROJECT (default local/acms). Argument: the question (default "how do
I resolve a scope"). Needs the acms-client package installed (clients/python/README.md):

    python clients/python/examples/example_agent.py "how do I ingest a folder"
"""

from __future__ import annotations

import os
import sys

from acms_client import AcmsClient, AcmsError, ScopeViolationError, source_name, tier_name

OUTSIDE_RESOURCE = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def first_line(text: str, width: int = 90) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def main() -> int:
    project = os.environ.get("ACMS_PROJECT", "local/acms")
    question = " ".join(sys.argv[1:]) or "how do I resolve a scope"
    try:
        client = AcmsClient.from_env()
    except ValueError as err:
        print(f"example_agent: {err}", file=sys.stderr)
        return 2

    with client as acms:
        # 1. One frozen scope for the whole plan: every later call sends it.
        scope = acms.resolve_scope([project]).scope
        print(f"scope {scope.scope_id}: {len(scope.resource_ids)} resources in {', '.join(scope.project_names)}")
        agent = acms.with_scope(scope.scope_id)

        # 2. Hybrid search: keyword, vector and graph evidence fused by rank.
        found = agent.hybrid_search(question, top_k=5).results
        print(f"hybrid search {question!r}: {len(found)} results")
        for rank, hit in enumerate(found, 1):
            sources = "+".join(source_name(c.source) for c in hit.contributions)
            print(f"  {rank}. {hit.score:.4f} {hit.uko_uri} (sources {sources})")
        if not found:
            print("nothing found: ingest some documents first (see README, Quickstart)")
            return 1

        # 3. Fetch the content in rank order; the answer keeps the order asked.
        uris = [hit.uko_uri for hit in found]
        fetched = agent.fetch_content(uris)
        in_order = [item.uko_uri for item in fetched.items] == uris
        print(f"fetched {len(fetched.items)} items in order: {in_order}; missing {len(fetched.missing)}")
        for item in fetched.items:
            print(f"  {item.path}: {first_line(item.content)}")

        # 4. Notes in the context tiers: the plan in hot, the evidence list in warm.
        plan = agent.store_fragment(
            f"Question: {question}\nBest source: {found[0].uko_uri}", project_name=project, tier="hot", metadata={"kind": "plan"}
        ).fragment
        evidence = agent.store_fragment(
            "Evidence, in rank order:\n" + "\n".join(uris),
            project_name=project,
            tier="warm",
            resource_id=found[0].resource_id,
            metadata={"kind": "evidence"},
        ).fragment
        for note in (plan, evidence):
            print(f"stored note {note.fragment_id} in {tier_name(note.tier)} ({note.token_count} tokens)")
        again = agent.get_fragment(plan.fragment_id).fragment
        print(f"read back {again.fragment_id}: {first_line(again.content, 60)}")
        executor_view = agent.get_for_actor("executor", project_names=[project]).fragments
        reviewer_view = agent.get_for_actor("reviewer", project_names=[project]).fragments
        print(f"executor sees {len(executor_view)} notes, reviewer sees {len(reviewer_view)}")
        m = agent.get_metrics()
        print(
            f"tier metrics: hot {m.hot_population} fragments/{m.hot_tokens} tokens, "
            f"warm {m.warm_population}, cold {m.cold_population}; hot hits {m.hot_hits}"
        )

        # 5. Isolation: a unit outside the scope is refused, with the offending id.
        try:
            agent.fetch_content([f"uko://{OUTSIDE_RESOURCE}/secret.md"])
            print("out-of-scope fetch was NOT refused")
            return 1
        except ScopeViolationError as err:
            print(f"out-of-scope fetch refused: resources {err.resource_ids}, scope projects {err.scope_project_names}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AcmsError as err:
        print(f"example_agent: {err}", file=sys.stderr)
        sys.exit(1)
