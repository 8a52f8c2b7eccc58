"""The Python runner of clients/scenario/scenario.json (the rules are in clients/scenario/README.md; the Go and
TypeScript runners follow the same ones): each step's call is made with acms-client, its answer reduced to a
plain observation and matched against the step's expectations. It stops at the first step that does not answer
as expected and prints one line per step run ("ok 5 keyword search", "FAIL 13 ...: reason").

Environment: ACMS_URL (unset: skipped), ACMS_API_KEY (a key that may write ACMS_PROJECT's namespace),
ACMS_PROJECT (the {project} of this run: a fresh name), ACMS_TRACEPARENT (optional: sent as the W3C
``traceparent`` of every call with the ``headers`` call option, so the server's spans continue that trace),
ACMS_SCENARIO (scenario.json's path, for a copy of this file outside the repository; default ../scenario.json).
Run by pytest, or as a program (``python test_scenario.py``, exit status 1 on a failure), which needs only acms-client.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from acms_client import AcmsClient, AcmsError, ScopeViolationError, document_batches, tier_name
from acms_client.gen.acms.v1 import index_pb2

# ACMS_SCENARIO names scenario.json when this file is copied out of the repository.
SCENARIO = Path(os.environ.get("ACMS_SCENARIO") or Path(__file__).resolve().parent.parent / "scenario.json")
VARIABLE = re.compile(r"\{(\w+)\}")


def substitute(value: Any, variables: dict[str, str]) -> Any:
    """``value`` with every ``{name}`` in its strings replaced by ``variables[name]``."""
    if isinstance(value, str):
        return VARIABLE.sub(lambda m: variables[m.group(1)], value)
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    return value


def difference(expected: Any, actual: Any, at: str = "answer") -> str | None:
    """The first place ``actual`` differs from ``expected`` (objects: the keys given; lists: same length, in order)."""
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{at}: expected {json.dumps(expected)}, got {json.dumps(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            if (d := difference(e, a, f"{at}[{i}]")) is not None:
                return d
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{at}: expected an object, got {json.dumps(actual)}"
        for k, v in expected.items():
            if (d := difference(v, actual.get(k), f"{at}.{k}")) is not None:
                return d
        return None
    same = expected == actual and isinstance(expected, bool) == isinstance(actual, bool)
    return None if same else f"{at}: expected {json.dumps(expected)}, got {json.dumps(actual)}"


def call(acms: AcmsClient, name: str, a: dict[str, Any], headers: list[tuple[str, str]]) -> dict[str, Any]:
    if name == "createProject":
        return {"name": acms.create_project(a["name"], headers=headers).project.name}
    if name == "registerResource":
        r = acms.register_resource(a["project"], a["alias"], a["kind"], headers=headers).resource
        return {"id": r.id, "alias": r.alias, "ownerProject": r.owner_project}
    if name == "upsertDocuments":
        docs = [
            index_pb2.DocumentInput(path=d["path"], content=d["content"], chunks=[index_pb2.ChunkInput(text=d["content"], embedding=d["embedding"])])
            for d in a["documents"]
        ]
        u = acms.upsert_documents(document_batches(a["resourceId"], docs), headers=headers)
        return {"documentsUpserted": u.documents_upserted, "chunksIndexed": u.chunks_indexed, "vectorsIndexed": u.vectors_indexed}
    if name == "resolveScope":
        s = acms.resolve_scope(a["projects"], headers=headers).scope
        return {"scopeId": s.scope_id, "projectNames": list(s.project_names), "resourceIds": list(s.resource_ids)}
    if name == "search":
        t = acms.search(a["query"], max_results=a["maxResults"], headers=headers)
        return {"paths": [r.path for r in t.results], "scopeId": t.scope_id}
    if name == "similaritySearch":
        v = acms.similarity_search(a["embedding"], top_k=a["topK"], headers=headers)
        return {"paths": [r.path for r in v.results], "scopeId": v.scope_id}
    if name == "hybridSearch":
        h = acms.hybrid_search(a["query"], embedding=a["embedding"], top_k=a["topK"], headers=headers)
        return {"paths": [r.path for r in h.results], "scopeId": h.scope_id}
    if name == "searchStream":
        return {"paths": [m.result.path for m in acms.search_stream(a["query"], max_results=a["maxResults"], headers=headers)]}
    if name == "fetchContent":
        f = acms.fetch_content(a["ukoUris"], headers=headers)
        return {"paths": [i.path for i in f.items], "missing": list(f.missing)}
    if name == "storeFragment":
        stored = acms.store_fragment(a["content"], project_name=a["projectName"], headers=headers).fragment
        return {"fragmentId": stored.fragment_id, "tier": tier_name(stored.tier).upper()}
    if name == "getFragment":
        got = acms.get_fragment(a["fragmentId"], headers=headers).fragment
        return {"fragmentId": got.fragment_id, "content": got.content, "tier": tier_name(got.tier).upper()}
    if name == "deleteFragment":
        return {"deleted": acms.delete_fragment(a["fragmentId"], headers=headers).deleted}
    if name == "deleteResource":
        acms.delete_resource(a["resourceId"], headers=headers)
        return {}
    raise ValueError(f"unknown call {name}")


def check(step: dict[str, Any], variables: dict[str, str], observation: dict[str, Any] | None, error: AcmsError | None) -> str | None:
    """Why ``step`` did not answer as expected, or None."""
    expected_error = step.get("expectError")
    if expected_error is not None:
        want = expected_error["code"]
        if error is None:
            return f"expected {want}, got an answer"
        if error.code.name != want:
            return f"expected {want}, got {error.code.name}: {error.message}"
        if "scopeViolation" in expected_error:
            if not isinstance(error, ScopeViolationError):
                return "the refusal carries no ScopeViolation"
            got = {"resourceIds": error.resource_ids, "projectNames": error.project_names, "scopeProjectNames": error.scope_project_names}
            return difference(substitute(expected_error["scopeViolation"], variables), got, "scopeViolation")
        return None
    if error is not None:
        return f"{error.code.name}: {error.message}"
    return difference(substitute(step.get("expect", {}), variables), observation)


def run(url: str, api_key: str, project: str, traceparent: str = "") -> str | None:
    """Runs the scenario, printing a line per step run; the first failure's reason, or None when every step passed."""
    scenario = json.loads(SCENARIO.read_text(encoding="utf-8"))
    variables: dict[str, str] = {**scenario["variables"], "project": project}
    headers = [("traceparent", traceparent)] if traceparent else []
    with AcmsClient(url, api_key) as base:
        for i, step in enumerate(scenario["steps"], start=1):
            acms = base.with_scope(variables["scope"]) if "scope" in variables else base
            observation: dict[str, Any] | None = None
            error: AcmsError | None = None
            try:
                observation = call(acms, step["call"], substitute(step["args"], variables), headers)
            except AcmsError as err:
                error = err
            reason = check(step, variables, observation, error)
            if reason is not None:
                print(f"FAIL {i} {step['name']}: {reason}", flush=True)
                return f"step {i} ({step['name']}): {reason}"
            for var, field in step.get("save", {}).items():
                variables[var] = str((observation or {})[field])
            print(f"ok {i} {step['name']}", flush=True)
    return None


def run_from_env() -> str | None:
    """``run`` with the settings of the environment (see the module's docstring)."""
    return run(
        os.environ["ACMS_URL"].strip(),
        os.environ.get("ACMS_API_KEY", ""),
        os.environ["ACMS_PROJECT"],
        os.environ.get("ACMS_TRACEPARENT", "").strip(),
    )


def test_scenario() -> None:
    import pytest

    if not os.environ.get("ACMS_URL", "").strip():
        pytest.skip("ACMS_URL is unset: the scenario needs a live server (see clients/scenario/README.md)")
    failure = run_from_env()
    if failure is not None:
        pytest.fail(failure)


if __name__ == "__main__":
    # `python test_scenario.py`: the same run as a plain program (no pytest needed), exit status 1 on a failure.
    sys.exit(0 if run_from_env() is None else 1)
