// A PGlite with pgvector behind pglite-socket, run as its own Node process (PGlite is ESM with dynamic
// imports, which jest's CommonJS mode cannot load). Usage: node pglite-pgvector-server.mjs PORT
// Prints "ready" once it accepts connections; stops on SIGTERM or when stdin closes.
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

const port = Number(process.argv[2]);
const db = await PGlite.create({ extensions: { vector } });
const server = new PGLiteSocketServer({ db, port, host: "127.0.0.1", maxConnections: 4 });
await server.start();
process.stdout.write("ready\n");
const stop = async () => {
  await server.stop();
  await db.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.resume();
