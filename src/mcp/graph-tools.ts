import { createClient } from "@connectrpc/connect";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { GraphBackendService, type SparqlQueryResponse } from "../../gen/acms/v1/graph_pb.js";
import { runTool, type ToolEnv } from "./run-tool.js";
import { indexGeneration, scopeIdArg, scopedAnswer, termOut, termShape, tripleOut, tripleShape, toolOutput } from "./wire-shapes.js";

const graphAnswer = {
  triples: z.array(tripleShape).describe("CONSTRUCT / DESCRIBE, get_triples and traverse: the triples found"),
  ...scopedAnswer,
  index_generation: indexGeneration,
};

const GRAPH_NOTE =
  "Each resource's triples live in its own named graph `uko://<resource-id>/`; only the graphs of in-scope resources " +
  "are visible. Terms come back as {kind: iri | literal | blank, value, datatype?, language?}.";

/** `sparql`, `get_triples`, `traverse`: the graph RPCs of the same names, under the scope. */
export function registerGraphTools(server: McpServer, env: ToolEnv): void {
  server.registerTool(
    "sparql",
    {
      title: "Query the knowledge graph (SPARQL)",
      description:
        "Run a SPARQL 1.1 read query (SELECT, ASK, CONSTRUCT or DESCRIBE) over the knowledge graph of the scope. " +
        GRAPH_NOTE +
        " The default graph is the union of the in-scope graphs. FROM / FROM NAMED / GRAPH <iri> naming an in-scope " +
        "graph narrows the query; naming any other graph is refused, as are updates, SERVICE and LOAD. SELECT answers " +
        "`variables` and `rows` (variable -> term), ASK answers `boolean`, CONSTRUCT/DESCRIBE answer `triples`.",
      inputSchema: {
        query: z.string().describe("the SPARQL read query"),
        scope_id: scopeIdArg,
      },
      outputSchema: toolOutput({
        form: z.enum(["SELECT", "ASK", "CONSTRUCT", "DESCRIBE"]).optional().describe("the query's form"),
        variables: z.array(z.string()).describe("SELECT: the projected variables"),
        rows: z.array(z.record(z.string(), termShape)).describe("SELECT: one binding map per solution"),
        boolean: z.boolean().optional().describe("ASK: the answer"),
        ...graphAnswer,
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(env, args.scope_id, extra, async (call) => {
        const res = await createClient(GraphBackendService, call.transport).sparqlQuery({ query: args.query }, call.options);
        const form = res.metadata.query_form;
        return {
          ...(form === "SELECT" || form === "ASK" || form === "CONSTRUCT" || form === "DESCRIBE" ? { form } : {}),
          variables: [...res.variables],
          rows: res.rows.map((row) => Object.fromEntries(Object.entries(row.bindings).map(([k, t]) => [k, termOut(t)]))),
          ...(form === "ASK" ? { boolean: res.boolean } : {}),
          ...graphTail(res),
        };
      }),
  );

  server.registerTool(
    "get_triples",
    {
      title: "Get the triples about one subject",
      description: "Every in-scope triple whose subject is the given IRI (what the graph states about that thing). " + GRAPH_NOTE,
      inputSchema: {
        subject: z.string().describe("the subject IRI"),
        scope_id: scopeIdArg,
      },
      outputSchema: toolOutput(graphAnswer),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(env, args.scope_id, extra, async (call) =>
        graphTail(await createClient(GraphBackendService, call.transport).getTriples({ subject: args.subject }, call.options)),
      ),
  );

  server.registerTool(
    "traverse",
    {
      title: "Walk the graph from a node",
      description:
        "Every in-scope triple reachable from `start` within `depth` hops (following objects that are IRIs): the " +
        "neighbourhood of a thing in the knowledge graph. depth 0 gives the start node's own triples. " +
        GRAPH_NOTE,
      inputSchema: {
        start: z.string().describe("the IRI to start from"),
        depth: z.number().int().optional().describe("hops to follow, 0 to 8 (default 2)"),
        scope_id: scopeIdArg,
      },
      outputSchema: toolOutput(graphAnswer),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(env, args.scope_id, extra, async (call) =>
        graphTail(await createClient(GraphBackendService, call.transport).traverse({ start: args.start, depth: args.depth }, call.options)),
      ),
  );
}

function graphTail(res: Pick<SparqlQueryResponse, "triples" | "scopeId" | "exhaustive" | "indexGeneration">) {
  return {
    triples: res.triples.map(tripleOut),
    scope_id: res.scopeId,
    exhaustive: res.exhaustive,
    index_generation: Number(res.indexGeneration),
  };
}
