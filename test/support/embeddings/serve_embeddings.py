"""An OpenAI-compatible embeddings server over a local ONNX sentence model, for the tests and benches.

It speaks what Ollama, vLLM, text-embeddings-inference and OpenAI serve: `POST /embeddings` (and
`/v1/embeddings`) with `{"model": ..., "input": str | [str]}`, answering
`{"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}], "model": ..., "usage": ...}`.
The model runs on ONNX Runtime with Hugging Face's `tokenizers` (Rust), independently of the server's own
in-process adapter: mean pooling over the attention mask, then L2 normalisation (sentence-transformers'
all-MiniLM-L6-v2), inputs truncated to 256 word pieces.

Usage: python serve_embeddings.py MODEL_DIR [--port 0] [--api-key KEY]; prints `listening <port>` once ready.
"""

import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MAX_TOKENS = 256


def load(model_dir):
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), opts, providers=["CPUExecutionProvider"])
    return tok, session


def embed(tok, session, texts):
    encs = tok.encode_batch(texts)
    width = max(len(e.ids) for e in encs)
    ids = np.zeros((len(encs), width), dtype=np.int64)
    mask = np.zeros((len(encs), width), dtype=np.int64)
    for i, e in enumerate(encs):
        ids[i, : len(e.ids)] = e.ids
        mask[i, : len(e.ids)] = 1
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in [i.name for i in session.get_inputs()]:
        feeds["token_type_ids"] = np.zeros_like(ids)
    hidden = session.run(None, feeds)[0]
    m = mask[:, :, None].astype(np.float32)
    pooled = (hidden * m).sum(axis=1) / m.sum(axis=1)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    return pooled


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model-name", default="all-minilm-l6-v2")
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()
    tok, session = load(args.model_dir)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            if self.path not in ("/embeddings", "/v1/embeddings"):
                return self.answer(404, {"error": {"message": "not found"}})
            if args.api_key is not None and self.headers.get("authorization") != f"Bearer {args.api_key}":
                return self.answer(401, {"error": {"message": "bad api key"}})
            try:
                req = json.loads(raw)
                texts = req["input"]
                if isinstance(texts, str):
                    texts = [texts]
                if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
                    raise ValueError("input must be a string or a non-empty list of strings")
            except (ValueError, KeyError, TypeError) as e:
                return self.answer(400, {"error": {"message": str(e)}})
            vectors = embed(tok, session, texts)
            data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
            self.answer(200, {"object": "list", "data": data, "model": req.get("model", args.model_name), "usage": {"prompt_tokens": 0, "total_tokens": 0}})

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
