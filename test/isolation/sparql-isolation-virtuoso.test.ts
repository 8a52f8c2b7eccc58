/**
 * The graph isolation tests (sparql-isolation.test.ts, every assertion) against a server whose graph is
 * a real Virtuoso behind the SPARQL 1.1 Protocol.
 */
import { graphOnVirtuoso } from "../support/engines/graph-on-virtuoso.js";

graphOnVirtuoso();
require("./sparql-isolation.test");
