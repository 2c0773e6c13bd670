"""The shipped dense model on ONNX Runtime: exported once from the packaged weights into the
user cache (keyed by the model files' digest), int8 quantised on request, and pooled and
normalised as sentence-transformers pools and normalises this model."""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, MissingExtraError
from ..util.atomic import write_atomic
from ..util.cache import cache_root
from ..util.cores import all_cores
from ..util.files import folder_digest
from .token_model import folder_window

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
"""The exported graph's inputs (BERT's); its one output is the last hidden state."""
RECIPE = 2
"""The export and quantisation recipe: part of the cache key, raised when either changes."""
FP32, INT8 = "model.onnx", "model.int8.onnx"
QUANTISE = {"per_channel": True}
"""Dynamic int8 weights, one scale per output channel (one scale per tensor moved this
model's embeddings several times further from the fp32 ones). The fused graph's attention
ops carry no type shape inference can read, hence the default tensor type (float)."""


def export_folder(model_path: str | os.PathLike, root: str | os.PathLike | None = None) -> Path:
    """Where the exports of the model at ``model_path`` are kept: ``onnx/<digest>`` of the
    cache root, the digest made of the model's files and the recipe."""
    return Path(root or cache_root()) / "onnx" / model_digest(Path(model_path))


def model_digest(folder: Path) -> str:
    """sha256 of every file of the model folder (relative name and content) and ``RECIPE``."""
    return folder_digest(folder, f"recipe {RECIPE}\0")


def onnx_model(model_path: str | os.PathLike, *, int8: bool = False,
               root: str | os.PathLike | None = None) -> Path:
    """The ONNX file of the model (int8 quantised or not), exported (and quantised) on first
    use and written atomically; later calls, in any process, reuse it."""
    folder = export_folder(model_path, root)
    fp32 = folder / FP32
    if not fp32.is_file():
        write_atomic(fp32, lambda tmp: export(Path(model_path), tmp))
    if not int8:
        return fp32
    quantised = folder / INT8
    if not quantised.is_file():
        write_atomic(quantised, lambda tmp: quantise(fp32, tmp))
    return quantised


def export(model_path: Path, target: Path) -> None:
    """Export the transformer of the model at ``model_path`` (its token embeddings, batch and
    sequence length dynamic) with torch.onnx's exporter, offline, and fuse its attention,
    normalisation and GELU layers into ONNX Runtime's operators (onnxscript's fusions: on
    the sample, the export embedded 1.68x and 1.77x as many texts per CPU second as torch
    without them, 1.92x and 1.96x with them; docs/speed.md)."""
    import torch
    from onnxscript.rewriter.ort_fusions import optimize_for_ort

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self, inner: Any):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = {name: torch.ones((2, 8), dtype=torch.long) for name in INPUTS}
    batch, length = torch.export.Dim("batch"), torch.export.Dim("sequence")
    with _quiet():
        program = torch.onnx.export(
            TokenEmbeddings(_transformer(model_path)), (), kwargs=sample,
            input_names=list(INPUTS), output_names=["token_embeddings"],
            dynamic_shapes={name: {0: batch, 1: length} for name in INPUTS},
            dynamo=True, verbose=False)
        optimize_for_ort(program.model)
        program.save(str(target), external_data=False)


def _transformer(model_path: Path) -> Any:
    """The model's transformers module, loaded offline and quietly."""
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    os.environ["HF_HUB_OFFLINE"] = "1"
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Loading weights" bar
    try:
        return AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def quantise(source: Path, target: Path) -> None:
    """ONNX Runtime's dynamic int8 quantisation of ``source`` (``QUANTISE``)."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet():
        quantize_dynamic(source, target, weight_type=QuantType.QInt8, **QUANTISE,
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})


@contextmanager
def _quiet() -> Iterator[None]:
    """Warnings and log lines of the exporter and the quantiser held back (they tell of
    optional packages and pre-processing steps this export does not use)."""
    level = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(level)


class OnnxEncoder:
    """The model on ONNX Runtime's CPU provider: the model's tokenizer (its window, padding
    to the longest text of a batch), the exported transformer (``graph``: an export the
    model folder holds, else the one made from its weights), then mean pooling over the
    attention mask and L2 normalisation, as the model's sentence-transformers modules do."""

    def __init__(self, model_path: str | os.PathLike, *, int8: bool = False,
                 threads: int | None = None, root: str | os.PathLike | None = None,
                 graph: str | os.PathLike | None = None):
        try:
            import onnxruntime
        except ImportError:
            runtime = "onnx-int8" if int8 else "onnx"
            raise MissingExtraError(f"dense runtime {runtime!r}", "dense", "onnxruntime") from None
        folder = Path(model_path)
        check_pooling(folder)
        self.path = Path(graph) if graph else onnx_model(folder, int8=int8, root=root)
        self.threads = threads or all_cores()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        # waiting threads sleep instead of spinning: CPU time goes to the work
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(str(self.path), options,
                                                    providers=["CPUExecutionProvider"])
        self.tokenizer = _tokenizer(folder)
        self.inputs = [i.name for i in self.session.get_inputs()]
        """What the graph reads (an export may take no ``token_type_ids``)."""

    def embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Unit vectors of ``texts`` (rows in order), longest first in batches."""
        out = np.zeros((len(texts), self.dimension()), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            out[rows] = self._batch([texts[i] for i in rows])
        return out

    def dimension(self) -> int:
        return int(self.session.get_outputs()[0].shape[-1])

    def _batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {name: feed[name] for name in self.inputs})[0]
        return mean_pooled(hidden, mask)


def mean_pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The mean of each text's token vectors over its attention mask (the count clamped at
    1e-9), scaled to unit length (the norm clamped at 1e-12)."""
    weights = mask[..., None].astype(np.float32)
    vectors = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)


def check_pooling(folder: Path) -> None:
    """A model this encoder would embed differently from sentence-transformers (a pooling
    other than the mean of token vectors, or modules after it other than Normalize) is
    refused; without Normalize the vectors are normalised all the same, as retrieval asks
    sentence-transformers to."""
    modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
    pooling = next((m["path"] for m in modules if m["type"].endswith("Pooling")), "")
    modes = json.loads((folder / pooling / "config.json").read_text(encoding="utf-8")) \
        if pooling else {}
    used = sorted(k for k, on in modes.items() if k.startswith("pooling_mode_") and on)
    if isinstance(modes.get("pooling_mode"), str):  # sentence-transformers 6 names the mode
        used = [f"pooling_mode_{modes['pooling_mode']}_tokens"]
    if kinds not in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"]) \
            or used != ["pooling_mode_mean_tokens"]:
        raise ConfigError(f"the ONNX runtime embeds models of Transformer, mean Pooling and "
                          f"Normalize; {folder.name} has {kinds}, pooling {used}")


def _tokenizer(folder: Path) -> Any:
    """The model's tokenizer cut at its window (``token_model.folder_window``) and padding a
    batch to its longest text."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    window = folder_window(folder)
    if window is not None:
        tokenizer.enable_truncation(window)
    config = folder / "tokenizer_config.json"
    pad = json.loads(config.read_text(encoding="utf-8")).get("pad_token", "[PAD]") \
        if config.is_file() else "[PAD]"
    pad = pad if isinstance(pad, str) else "[PAD]"
    # padded positions are masked out of the pooling: any id pads
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id(pad) or 0, pad_token=pad)
    return tokenizer
