"""Checks the Python wrapper against a real server: headers, typed results and decoded error details.

Run by python-client.test.ts with the python of a venv the acms-client wheel is installed in, and ACMS_URL,
ACMS_API_KEY, ACMS_PROJECT and ACMS_OUTSIDE_PROJECT set.
Prints one `ok <check>` line per check and exits non-zero on the first failure.
"""

import os
import sys

import grpc

from acms_client import AcmsClient, AcmsError, InvalidArgumentError, ScopeViolationError

OUTSIDE = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def check(name: str, condition: bool) -> None:
    if not condition:
        print(f"FAILED {name}")
        sys.exit(1)
    print(f"ok {name}")


url, key, project = os.environ["ACMS_URL"], os.environ["ACMS_API_KEY"], os.environ["ACMS_PROJECT"]
with AcmsClient(url, key) as acms:
    check("list_projects sees the project", project in [p.name for p in acms.list_projects()])
    resource_id = acms.resolve_alias(project, "handbook")
    check("resolve_alias", len(resource_id) == 26)
    scope = acms.resolve_scope([project])
    check("resolve_scope", list(scope.resource_ids) == [resource_id])
    scoped = acms.with_scope(scope.scope_id)
    check("get_scope", acms.get_scope(scope.scope_id).scope_id == scope.scope_id)

    found = scoped.text_search("onboarding checklist", max_results=3)
    check("text_search carries the scope", found.scope_id == scope.scope_id and found.results[0].path == "onboarding.md")
    streamed = list(scoped.text_search_stream("onboarding checklist", max_results=3))
    check("text_search_stream keeps the order", [r.uko_uri for r in streamed] == [r.uko_uri for r in found.results])

    try:
        scoped.validate_resource_scope([resource_id, OUTSIDE])
        check("scope violation raised", False)
    except ScopeViolationError as err:
        check("scope violation names the offender", err.resource_ids == [OUTSIDE])
        check("scope violation names the scope projects", err.scope_project_names == [project])
        check("scope violation code", err.code == grpc.StatusCode.PERMISSION_DENIED)

    try:
        scoped.validate_project_scope([os.environ["ACMS_OUTSIDE_PROJECT"]])
        check("project violation raised", False)
    except ScopeViolationError as err:
        check("project violation names the project", err.project_names == [os.environ["ACMS_OUTSIDE_PROJECT"]])

    try:
        scoped.text_search("onboarding", max_results=0)
        check("invalid argument raised", False)
    except InvalidArgumentError as err:
        check("invalid argument names the field", err.fields == ["max_results"])

    try:
        acms.text_search("onboarding")
        check("missing scope raised", False)
    except AcmsError as err:
        check("missing scope is FAILED_PRECONDITION", err.code == grpc.StatusCode.FAILED_PRECONDITION)

    narrowed = scoped.narrow_scope(deny_resource_ids=[resource_id])
    check("narrow_scope", narrowed.parent_scope_id == scope.scope_id and list(narrowed.resource_ids) == [])

    stored = scoped.store_fragment("a note from python", project_name=project, tier="warm").fragment
    check("store_fragment", stored.token_count > 0 and scoped.get_fragment(stored.fragment_id).content == "a note from python")

    # Writes through the wrapper: a project, a resource, documents over the client stream, a delete.
    own = project + "-py"
    check("create_project", acms.create_project(own).name == own)
    resource = acms.register_resource(own, "notes", kind="docs", metadata={"origin": "python"})
    check("register_resource", resource.alias == "notes" and resource.metadata["origin"] == "python")
    docs = [(f"n{i}.md", f"python note {i} mentions zpy{i}q") for i in range(5)]
    written = acms.upsert_documents(resource.id, docs, batch_size=2)
    check("upsert_documents streams the batches", written.documents_upserted == 5 and written.messages_received == 3)
    check("delete_documents", acms.delete_documents(resource.id, ["n4.md", "absent.md"]) == 1)
    own_scope = acms.with_scope(acms.resolve_scope([own]).scope_id)
    hybrid = own_scope.hybrid_search("zpy1q", top_k=3, sources=["text"])
    check("hybrid_search", [r.path for r in hybrid.results] == ["n1.md"])
    uris = [f"uko://{resource.id}/n2.md", f"uko://{resource.id}/n0.md", f"uko://{resource.id}/n4.md"]
    fetched = own_scope.fetch_content(uris)
    check("fetch_content keeps the order", [i.path for i in fetched.items] == ["n2.md", "n0.md"] and list(fetched.missing) == [uris[2]])
    try:
        own_scope.fetch_content([f"uko://{resource_id}/onboarding.md"])
        check("fetch outside the scope raised", False)
    except ScopeViolationError as err:
        check("fetch outside the scope names the resource", err.resource_ids == [resource_id])
    try:
        own_scope.hybrid_search("x", sources=["smell"])
        check("unknown source raised", False)
    except ValueError:
        check("unknown source is a ValueError before any call", True)

with AcmsClient(url, "acms_not_a_key") as stranger:
    try:
        stranger.list_projects()
        check("unknown key raised", False)
    except AcmsError as err:
        check("unknown key is UNAUTHENTICATED", err.code == grpc.StatusCode.UNAUTHENTICATED)
print("all checks passed")
