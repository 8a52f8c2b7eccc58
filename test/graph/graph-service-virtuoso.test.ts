/** The graph service tests (graph-service.test.ts, every assertion) with the server's graph on Virtuoso. */
import { graphOnVirtuoso } from "../support/engines/graph-on-virtuoso.js";

graphOnVirtuoso();
require("./graph-service.test");
