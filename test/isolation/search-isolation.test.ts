import { ENV } from "./isolation-fixture.js";
import { searchIsolationSuite } from "./search-isolation-suite.js";

searchIsolationSuite({ env: ENV });
