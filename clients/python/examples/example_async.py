#!/usr/bin/env python3
"""An asyncio example on the ACMS Python client: one scope, three searches at once, a streamed search, and a
refusal read as a typed error.

Environment, as the acms CLI reads it: ACMS_URL, else http://ACMS_HOST:ACMS_PORT (defaults 127.0.0.1 and
50051); ACMS_API_KEY (required); ACMS_PROJECT (default local/acms). Argument: the query (default "scope").

    python clients/python/examples/example_async.py "ingest a folder"
"""

from __future__ import annotations

import asyncio
import os
import sys

from acms_client import AcmsError, AsyncAcmsClient, ScopeViolationError


async def main(query: str) -> int:
    project = os.environ.get("ACMS_PROJECT", "local/acms")
    async with AsyncAcmsClient.from_env() as acms:
        scope = (await acms.resolve_scope([project])).scope
        agent = acms.with_scope(scope.scope_id)
        print(f"scope {scope.scope_id}: {len(scope.resource_ids)} resources in {', '.join(scope.project_names)}")

        # The three searches run concurrently on the one channel.
        text, hybrid, graph = await asyncio.gather(
            agent.search(query, max_results=3),
            agent.hybrid_search(query, top_k=3),
            agent.sparql_query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"),
        )
        print(f"text: {[r.path for r in text.results]}")
        print(f"hybrid: {[r.path for r in hybrid.results]}")
        print(f"graph: {graph.rows[0].bindings['n'].value if graph.rows else 0} triples in scope")

        # A server stream is an async iterator: results arrive in rank order.
        async for message in agent.search_stream(query, max_results=3):
            print(f"streamed {message.result.score:.4f} {message.result.uko_uri}")

        try:
            await agent.validate_project_scope(["other/secret"])
        except ScopeViolationError as err:
            print(f"refused: projects {err.project_names} are not in {err.scope_project_names}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main(" ".join(sys.argv[1:]) or "scope")))
    except (AcmsError, ValueError) as err:
        print(f"example_async: {err}", file=sys.stderr)
        sys.exit(1)
