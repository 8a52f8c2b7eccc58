import { toJson, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { CliIo } from "./cli-io.js";

/** Prints a protobuf message as its canonical JSON on one line (what `--json` promises scripts). */
export function printMessageJson<D extends DescMessage>(io: CliIo, schema: D, message: MessageShape<D>): void {
  io.stdout.write(`${JSON.stringify(toJson(schema, message, { alwaysEmitImplicit: true }))}\n`);
}
