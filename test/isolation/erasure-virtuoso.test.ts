/**
 * The erasure tests (erasure.test.ts, every assertion) against a server whose graph is a real Virtuoso
 * behind the SPARQL 1.1 Protocol: the resource's named graph and its typed-literal graph are dropped there.
 */
import { graphOnVirtuoso } from "../support/engines/graph-on-virtuoso.js";

graphOnVirtuoso();
require("./erasure.test");
