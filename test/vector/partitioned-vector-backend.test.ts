import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import type { VectorBackend } from "../../src/ports/vector-backend.js";
import { runVectorBackendSuite } from "./vector-backend-suite.js";

const settle = (backend: VectorBackend) => (backend as PartitionedVectorBackend).whenIndexed();

runVectorBackendSuite({
  name: "PartitionedVectorBackend, exact scan only",
  exact: true,
  create: (dimension) => new PartitionedVectorBackend({ dimension, exactThreshold: Number.MAX_SAFE_INTEGER, yieldEveryMs: 0 }),
});

runVectorBackendSuite({
  name: "PartitionedVectorBackend, HNSW forced on every partition",
  exact: false,
  create: (dimension) =>
    new PartitionedVectorBackend({ dimension, exactThreshold: 0, yieldEveryMs: 0, indexBatchRows: 500, storeGraph: false }),
  settle,
});

runVectorBackendSuite({
  name: "PartitionedVectorBackend, HNSW forced with the store-wide graph",
  exact: false,
  create: (dimension) => new PartitionedVectorBackend({ dimension, exactThreshold: 0, yieldEveryMs: 0, indexBatchRows: 500 }),
  settle,
  skip: {
    "a search cancelled while it runs stops between partitions":
      "a scope over the whole store is answered by the store-wide graph in one synchronous step: there is no point between partitions to stop at",
  },
});

runVectorBackendSuite({
  name: "PartitionedVectorBackend, default tuning (exact scans, pooled int8 scans, store-wide graph and cells)",
  exact: false,
  create: (dimension) => new PartitionedVectorBackend({ dimension, yieldEveryMs: 0 }),
  settle,
});
