/**
 * A mistake in the command line itself (a bad flag value, a missing file): printed as `invalid_argument`.
 * A file of its own so that parsing flags loads nothing else (see `program.ts`: subcommands load lazily).
 */
export class CliUsageError extends Error {}
