/** Files above this size are skipped unless --max-file-bytes says otherwise. */
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
/** Chunk texts per run of --embed-command unless --embed-batch-size says otherwise. */
export const DEFAULT_EMBED_BATCH = 64;
