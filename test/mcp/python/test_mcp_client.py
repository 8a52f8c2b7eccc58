"""The Python `mcp` SDK's client against POST /mcp of a live ACMS server, configured as a user would: a URL, an
API key and a scope. Run by test/mcp/mcp-python-client.test.ts, which starts the server, seeds two tenants and
passes their ids in the environment (ACMS_MCP_URL, ACMS_API_KEY, ACMS_SCOPE, ACMS_DOCS, ACMS_CODE, ACMS_SECRET,
ACMS_OTHER_SCOPE)."""

import asyncio
import os

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError

URL = os.environ["ACMS_MCP_URL"]
KEY = os.environ["ACMS_API_KEY"]
SCOPE = os.environ["ACMS_SCOPE"]
DOCS = os.environ["ACMS_DOCS"]
CODE = os.environ["ACMS_CODE"]
SECRET = os.environ["ACMS_SECRET"]
OTHER_SCOPE = os.environ["ACMS_OTHER_SCOPE"]

TOOLS = ["fetch", "forget", "get_triples", "list_resources", "narrow_scope", "recall", "remember", "search", "sparql", "traverse"]


def with_session(fn):
    async def run():
        headers = {"authorization": f"Bearer {KEY}", "acms-scope": SCOPE}
        async with streamablehttp_client(URL, headers=headers) as (read, write, _):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.serverInfo.name == "acms"
                return await fn(session)

    return asyncio.run(run())


def test_lists_the_ten_tools_with_schemas():
    async def body(s):
        tools = (await s.list_tools()).tools
        assert sorted(t.name for t in tools) == TOOLS
        for t in tools:
            assert t.description and len(t.description) > 80
            assert t.inputSchema["type"] == "object"
            assert t.outputSchema is not None and t.outputSchema["type"] == "object"
            assert "scope_id" in t.inputSchema["properties"]

    with_session(body)


def test_searches_and_fetches_in_order():
    async def body(s):
        r = await s.call_tool("search", {"query": "zebra", "mode": "text"})
        assert not r.isError
        paths = sorted(h["path"] for h in r.structuredContent["results"])
        assert paths == ["guide/intro.md", "guide/setup.md", "src/main.ts"]
        assert r.structuredContent["scope_id"] == SCOPE
        hybrid = await s.call_tool("search", {"query": "zebra"})
        assert hybrid.structuredContent["mode"] == "hybrid"
        assert {h["resource_id"] for h in hybrid.structuredContent["results"]} <= {DOCS, CODE}
        uris = [f"uko://{CODE}/src/main.ts", f"uko://{DOCS}/guide/intro.md", f"uko://{CODE}/src/main.ts"]
        f = await s.call_tool("fetch", {"uko_uris": uris})
        assert [i["uko_uri"] for i in f.structuredContent["items"]] == uris
        assert "zebra introduction" in f.structuredContent["items"][1]["content"]

    with_session(body)


def test_reads_a_uko_resource():
    async def body(s):
        uri = f"uko://{DOCS}/guide/setup.md"
        res = await s.read_resource(uri)
        assert len(res.contents) == 1
        assert str(res.contents[0].uri) == uri
        assert "zebra setup" in res.contents[0].text

    with_session(body)


def test_remembers_and_recalls_a_fragment():
    async def body(s):
        stored = await s.call_tool("remember", {"content": "python remembers zebras", "project_name": "local/api", "tier": "hot"})
        assert not stored.isError, stored.content
        fid = stored.structuredContent["fragment"]["fragment_id"]
        recalled = await s.call_tool("recall", {"role": "reviewer"}, meta={"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
        assert fid in [x["fragment_id"] for x in recalled.structuredContent["fragments"]]

    with_session(body)


def test_refused_with_a_typed_explanation():
    async def body(s):
        r = await s.call_tool("fetch", {"uko_uris": [f"uko://{SECRET}/vault.md"]})
        assert r.isError
        assert r.structuredContent["code"] == "PERMISSION_DENIED"
        assert r.structuredContent["resource_ids"] == [SECRET]
        assert r.structuredContent["scope_project_names"] == ["local/api"]
        assert SECRET in r.content[0].text
        assert "launch codes" not in str(r)
        other = await s.call_tool("search", {"query": "zebra", "scope_id": OTHER_SCOPE})
        assert other.isError and other.structuredContent["code"] == "PERMISSION_DENIED"
        graph = await s.call_tool("sparql", {"query": f"SELECT * WHERE {{ GRAPH <uko://{SECRET}/> {{ ?s ?p ?o }} }}"})
        assert graph.isError and graph.structuredContent["code"] == "PERMISSION_DENIED"
        with pytest.raises(McpError) as refused:
            await s.read_resource(f"uko://{SECRET}/vault.md")
        assert refused.value.error.code == -32003
        assert refused.value.error.data["code"] == "PERMISSION_DENIED"
        assert refused.value.error.data["resource_ids"] == [SECRET]

    with_session(body)
