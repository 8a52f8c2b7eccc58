import { Code, ConnectError } from "@connectrpc/connect";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import type { TestServer } from "./test-server.js";

/** Creates `name` as `principal` unless it exists already, so fixtures can share projects. */
export async function ensureProject(t: TestServer, principal: string, name: string): Promise<void> {
  try {
    await t.client(RegistryService, principal).createProject({ name });
  } catch (err) {
    if (ConnectError.from(err).code !== Code.AlreadyExists) throw err;
  }
}
