import { readFileSync } from "node:fs";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { TermKind, type TermSchema } from "../../gen/acms/v1/graph_pb.js";
import { PutTriplesResponseSchema } from "../../gen/acms/v1/index_pb.js";
import type { CliIo } from "./cli-io.js";
import { CliUsageError } from "./cli-usage-error.js";
import type { ConnectedBody } from "./connection-options.js";
import { printMessageJson } from "./print-json.js";
import { resolveResource } from "./resolve-resource.js";

const XSD_STRING = "http://www.w3.org/2001/XMLSchema#string";
const RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
const FORMATS: Record<string, string> = {
  turtle: "text/turtle",
  ttl: "text/turtle",
  ntriples: "application/n-triples",
  nt: "application/n-triples",
};

/** An RDF/JS term as Oxigraph's parser answers it. */
interface ParsedTerm {
  termType: string;
  value: string;
  language?: string;
  datatype?: { value: string };
}

/** The media type of `--format`, else of the file's extension (`.nt`), else Turtle (a superset of N-Triples). */
function mediaTypeOf(file: string, format: string | undefined): string {
  if (format !== undefined) {
    const type = FORMATS[format.toLowerCase()];
    if (!type) throw new CliUsageError(`--format must be turtle or ntriples, got "${format}"`);
    return type;
  }
  return /\.nt$/i.test(file) ? FORMATS.ntriples : FORMATS.turtle;
}

/** An RDF/JS term as the wire's Term: xsd:string and rdf:langString literals leave the datatype empty. */
function toWire(t: ParsedTerm): MessageInitShape<typeof TermSchema> {
  if (t.termType === "NamedNode") return { kind: TermKind.IRI, value: t.value };
  if (t.termType === "BlankNode") return { kind: TermKind.BLANK, value: t.value };
  if (t.termType === "Literal") {
    const datatype = t.datatype?.value ?? "";
    return {
      kind: TermKind.LITERAL,
      value: t.value,
      language: t.language ?? "",
      datatype: datatype === XSD_STRING || datatype === RDF_LANG_STRING ? "" : datatype,
    };
  }
  throw new CliUsageError(`the file holds a ${t.termType} term, which a triple cannot hold`);
}

function readInput(file: string): string {
  try {
    return readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (err) {
    throw new CliUsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** The body of `acms triples put`. */
export const putTriples =
  (io: CliIo): ConnectedBody<[string]> =>
  async ({ conn, client, cmd }, file) => {
    const o = cmd.opts<{ resource: string; project?: string; format?: string; base?: string; replace?: boolean }>();
    const format = mediaTypeOf(file, o.format);
    const text = readInput(file);
    const { parse } = await import("oxigraph");
    let quads: { subject: ParsedTerm; predicate: ParsedTerm; object: ParsedTerm; graph: ParsedTerm }[];
    try {
      quads = parse(text, { format, ...(o.base ? { base_iri: o.base } : {}) }) as unknown as typeof quads;
    } catch (err) {
      const message = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim();
      throw new CliUsageError(
        `${file === "-" ? "standard input" : file} is not valid ${format === FORMATS.turtle ? "Turtle" : "N-Triples"}: ${message}`,
      );
    }
    const triples = quads.map((q) => ({ subject: toWire(q.subject), predicate: toWire(q.predicate), object: toWire(q.object) }));
    const resourceId = await resolveResource(client, o.resource, o.project);
    const res = await client.index.putTriples({ resourceId, triples, replace: o.replace === true });
    if (conn.json) {
      printMessageJson(io, PutTriplesResponseSchema, res);
      return;
    }
    io.stdout.write(
      `${o.replace ? "replaced the graph of" : "put into"} ${resourceId}: ${res.count} ${res.count === 1 ? "triple" : "triples"}; index generation ${res.indexGeneration}\n`,
    );
  };
