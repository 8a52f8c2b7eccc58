/**
 * The contract tests that hold graph parts (services, errors, precise rules: every assertion) against
 * servers whose graph is Virtuoso, one instance shared by the three.
 */
import { graphOnVirtuoso } from "../support/engines/graph-on-virtuoso.js";

graphOnVirtuoso();
require("./services.test");
require("./errors.test");
require("./precise-rules.test");
