// Jest setup file of the "duckdb" project: the test servers of its suites keep documents and vectors in DuckDB.
process.env.ACMS_TEST_ENGINE = "duckdb";
