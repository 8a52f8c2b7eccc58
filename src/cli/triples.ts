import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";

const actions = () => import("./triples-actions.js");

/**
 * `acms triples put --resource R <file>`: writes the triples of an N-Triples or Turtle file into a
 * resource's named graph (PutTriples). The body is in `triples-actions.ts`, loaded only when it runs (it
 * parses with Oxigraph's parser, the one command but `serve` that loads that package).
 */
export function triplesCommand(io: CliIo): Command {
  const triples = new Command("triples").description("write RDF triples into a resource's graph");
  addConnectionOptions(
    triples
      .command("put")
      .description("parse an N-Triples or Turtle file and write its triples into the resource's named graph uko://<resource-id>/")
      .argument("<file>", "the file (.nt is N-Triples, anything else Turtle unless --format says), or - for standard input")
      .requiredOption("--resource <id|alias>", "the resource: an id, or an alias of --project")
      .option("--project <name>", "the project whose aliases --resource names")
      .option("--format <format>", "turtle or ntriples (default: from the file's extension, else turtle)")
      .option("--base <iri>", "the base IRI relative IRIs of a Turtle file resolve against")
      .option("--replace", "replace the graph's triples instead of adding to them"),
    { scoped: false },
  ).action(connectedAction(io, async () => (await actions()).putTriples(io)));
  return triples;
}
