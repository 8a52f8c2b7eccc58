// Jest setup file of the "postgres" project: the test servers of its suites run on PostgreSQL.
process.env.ACMS_TEST_ENGINE = "postgres";
