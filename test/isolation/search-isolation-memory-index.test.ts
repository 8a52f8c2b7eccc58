import { ENV } from "./isolation-fixture.js";
import { searchIsolationSuite } from "./search-isolation-suite.js";

// The same attacks against the in-memory BM25 keyword index instead of FTS5.
searchIsolationSuite({ env: { ...ENV, ACMS_KEYWORD_INDEX: "memory" } });
