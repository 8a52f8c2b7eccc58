// Jest setup file of the "postgres-replicas" project: every test server of its suites is two replicas on
// one PostgreSQL database and the run's Virtuoso, behind one round-robin address (test/support/test-server.ts).
process.env.ACMS_TEST_ENGINE = "postgres-replicas";
