import { ENV } from "./isolation-fixture.js";
import { searchIsolationSuite } from "./search-isolation-suite.js";

// The same attacks after a document is deleted and the server restarts on the same data directory.
searchIsolationSuite({ env: ENV, deleteAndRestart: true });
