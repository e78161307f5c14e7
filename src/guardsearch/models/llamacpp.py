"""LlamaCppModel: any local GGUF file on the CPU through llama-cpp-python.

One llama context serves one call at a time (an asyncio lock per event loop, plus a
thread lock because a cancelled caller's worker thread keeps running). Consecutive
calls that share a token prefix reuse its KV cache: llama-cpp-python keeps the last
evaluated tokens and only evaluates the new suffix, which matters for guard-driven
retries that resend the same long context. `Usage.cached_prompt_tokens` reports how
many prompt tokens were reused.

With `request.json_schema` the output is constrained by a GBNF grammar built from
the schema (see `schema_to_gbnf`) so a small model can only emit schema-shaped JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from guardsearch.core.errors import ConfigError, ModelError
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.core.usage import Usage
from guardsearch.models import unique_enum
from guardsearch.models.base import ensure_real_models_allowed
from guardsearch.models.cpu_check import LlamaSettings, resolve_settings

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    from llama_cpp.llama_grammar import LlamaGrammar

DEFAULT_MAX_LENGTH = 200
DEFAULT_MAX_ITEMS = 16

# JSON forbids raw control characters in strings; llama-cpp-python's converter allows
# anything but `"` and `\` (its `char` rule is `[^"\\]`), so a model could emit a raw
# newline or NUL and produce invalid JSON. These match llama.cpp's own json.gbnf.
_SAFE_CHAR_RULE = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'  # noqa: E501
# `.` in a `pattern` becomes `dot`; inside a JSON string it must not be a quote,
# a lone backslash or a control character either.
_SAFE_DOT_RULE = r'[^"\\\x7F\x00-\x1F]'

# Upper bound on what the chat template adds per message when the GGUF has no
# template of its own (llama-2 style fallback: "[INST] <<SYS>> ... [/INST]").
_FALLBACK_PER_MESSAGE = 16
_GRAMMAR_CACHE = 64

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_SINGLE = ("additionalProperties", "items", "not", "if", "then", "else", "contains")


def bound_schema(
    schema: Mapping[str, Any],
    *,
    max_length: int = DEFAULT_MAX_LENGTH,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> dict[str, Any]:
    """A copy of `schema` where every free string has a `maxLength` and every array a `maxItems`.

    The grammar enforces these bounds, so a small model that starts looping inside a
    string or list is cut off by the grammar instead of running to `max_tokens` and
    leaving truncated, unparseable JSON. Existing bounds are kept. `type: [a, b]` is
    rewritten as `anyOf` because the converter drops every other keyword for type lists.
    """
    node: dict[str, Any] = copy.deepcopy(dict(schema))
    return _bound(node, max_length, max_items)


def _bound(node: dict[str, Any], max_length: int, max_items: int) -> dict[str, Any]:
    types = node.get("type")
    if isinstance(types, list) and not any(k in node for k in ("anyOf", "oneOf")):
        rest = {k: v for k, v in node.items() if k != "type"}
        if len(types) == 1:
            node = {**rest, "type": types[0]}
        else:
            return _bound(
                {"anyOf": [{**copy.deepcopy(rest), "type": t} for t in types]},
                max_length,
                max_items,
            )

    for key in _SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            node[key] = {
                k: _bound(v, max_length, max_items) if isinstance(v, dict) else v
                for k, v in node[key].items()
            }
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            node[key] = [
                _bound(v, max_length, max_items) if isinstance(v, dict) else v for v in node[key]
            ]
    for key in _SCHEMA_SINGLE:
        value = node.get(key)
        if isinstance(value, dict):
            node[key] = _bound(value, max_length, max_items)
        elif key == "items" and isinstance(value, list):
            node[key] = [_bound(v, max_length, max_items) for v in value]

    constrained = any(k in node for k in ("enum", "const", "pattern", "format", "$ref"))
    if node.get("type") == "string" and not constrained and "maxLength" not in node:
        node["maxLength"] = max(max_length, int(node.get("minLength", 0)))
    is_list = node.get("type") == "array" and isinstance(node.get("items"), dict)
    if is_list and "maxItems" not in node:
        node["maxItems"] = max(max_items, int(node.get("minItems", 0)))
    return node


def schema_to_gbnf(
    schema: Mapping[str, Any],
    *,
    max_length: int = DEFAULT_MAX_LENGTH,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> str:
    """The GBNF grammar (llama.cpp syntax) whose sentences are JSON values valid for `schema`.

    Uses llama-cpp-python's own JSON-schema converter on the bounded schema, then
    swaps its string-character rules for ones that exclude control characters. An
    array of one enum with `uniqueItems` gets the grammar of `models.unique_enum`
    (the enum's values in order, each at most once), which the converter lacks.
    """
    from llama_cpp.llama_grammar import SchemaConverter

    bounded = bound_schema(schema, max_length=max_length, max_items=max_items)
    make_converter: Any = SchemaConverter  # untyped upstream
    converter = make_converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    lifted: list[dict[str, Any]] = []  # uniqueItems enums: the converter ignores uniqueItems
    try:
        resolved = converter.resolve_refs(unique_enum.lift(bounded, lifted), "input")
        converter.visit(resolved, "")
        unique_enum.splice(converter._rules, lifted, converter._format_literal)
    except Exception as exc:  # the converter signals unsupported schemas with asserts
        raise ConfigError(f"json_schema cannot be turned into a grammar: {exc!r}") from exc
    # The converter keeps its rules in a dict; `char` and `dot` are reserved names
    # (only the built-in primitives use them), so replacing them by name is exact.
    rules: dict[str, str] = converter._rules
    if "char" in rules:
        rules["char"] = _SAFE_CHAR_RULE
    if "dot" in rules:
        rules["dot"] = _SAFE_DOT_RULE
    return str(converter.format_grammar())


class LlamaCppModel:
    """A local GGUF model run by llama.cpp; implements `Model` and `TokenCounter`."""

    constrained_decoding = True  # json_schema becomes a GBNF grammar

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        name: str | None = None,
        repeat_penalty: float = 1.0,
        lazy_grammar: bool = True,
        prefix_cache: bool = True,
        extra_bufts: str | None = None,
    ) -> None:
        self.path = Path(path).expanduser()
        self.n_ctx = n_ctx
        self.n_threads = n_threads or available_cpus()
        self._name = name or self.path.stem
        # 1.0 = off: penalties distort structured output (JSON repeats `"` and `,` a lot).
        self.repeat_penalty = repeat_penalty
        self.lazy_grammar = lazy_grammar
        # Reusing the KV cache makes outputs depend (slightly) on the previous call:
        # llama.cpp's logits differ in the last bits with how the prompt was split into
        # batches, which can flip a greedy near-tie. Off = every call starts cold.
        self.prefix_cache = prefix_cache
        # on | off | auto (None = auto, unless $GUARDSEARCH_LLAMA_EXTRA_BUFTS says otherwise):
        # whether llama.cpp may repack weights into extra buffer types (see cpu_check).
        self.extra_bufts = extra_bufts
        self.settings: LlamaSettings | None = None
        self._llm: Llama | None = None
        self._formatter: Jinja2ChatFormatter | None = None
        self._grammars: dict[str, LlamaGrammar] = {}
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()
        # asyncio.Lock binds to the loop it first waits on; a model cached per process
        # may serve several `asyncio.run()` calls, so keep one lock per loop.
        self._async_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return (
            f"LlamaCppModel({str(self.path)!r}, n_ctx={self.n_ctx}, n_threads={self.n_threads}, "
            f"extra_bufts={self.extra_bufts or 'auto'})"
        )

    # -- loading ---------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory (they load on first use)."""
        return self._llm is not None

    def unload(self) -> None:
        """Let the weights go (after any call under way); the next use loads them again.

        A model ladder calls this to keep one local model in memory when RAM is short.
        """
        with self._load_lock, self._run_lock:
            llm, self._llm = self._llm, None
            self._formatter = None
            self._grammars.clear()
        if llm is not None:
            close = getattr(llm, "close", None)
            if callable(close):
                close()

    def _load(self) -> Llama:
        """The llama instance, loaded on first use (weights are large; load once)."""
        with self._load_lock:
            if self._llm is not None:
                return self._llm
            ensure_real_models_allowed(self.name)
            if not self.path.is_file():
                raise ConfigError(f"GGUF file not found: {self.path}")
            try:
                from llama_cpp.llama_chat_format import Jinja2ChatFormatter
            except ImportError as exc:
                raise ConfigError(
                    "llama-cpp-python is not installed: pip install 'guardsearch[embedded]'"
                ) from exc
            # Decide in a child process first: a native crash here would kill the caller.
            self.settings = resolve_settings(self.path, requested=self.extra_bufts)
            llm = load_llama(
                self.path,
                extra_bufts=self.settings.extra_bufts,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
            )
            template = llm.metadata.get("tokenizer.chat_template")
            if template:
                # Use the GGUF's own template (not a guessed built-in format) and keep the
                # formatter, so count_tokens renders the prompt exactly like a call does.
                eos_id, bos_id = llm.token_eos(), llm.token_bos()
                self._formatter = Jinja2ChatFormatter(
                    template=template,
                    eos_token=llm._model.token_get_text(eos_id) if eos_id != -1 else "",
                    bos_token=llm._model.token_get_text(bos_id) if bos_id != -1 else "",
                    stop_token_ids=[eos_id],
                )
                llm.chat_handler = self._formatter.to_chat_handler()
            if self.lazy_grammar:
                _use_lazy_grammar(llm)
            self._llm = llm
            return llm

    def _grammar(self, llm: Llama, gbnf: str) -> LlamaGrammar:
        """A checked, cached LlamaGrammar for `gbnf`.

        llama.cpp returns NULL for a grammar it cannot parse and llama-cpp-python adds
        that NULL to the sampler chain unchecked (a crash), so parse it once up front.
        """
        cached = self._grammars.get(gbnf)
        if cached is not None:
            return cached
        import llama_cpp
        from llama_cpp.llama_grammar import LlamaGrammar

        grammar = LlamaGrammar.from_string(gbnf, verbose=False)
        probe = llama_cpp.llama_sampler_init_grammar(
            llm._model.vocab, gbnf.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not probe:
            raise ConfigError(f"llama.cpp rejected the grammar built from json_schema:\n{gbnf}")
        llama_cpp.llama_sampler_free(probe)
        if len(self._grammars) >= _GRAMMAR_CACHE:
            self._grammars.pop(next(iter(self._grammars)))  # oldest first
        self._grammars[gbnf] = grammar
        return grammar

    # -- TokenCounter ------------------------------------------------------------

    def _prompt_tokens(self, llm: Llama, request: ModelRequest) -> list[int] | None:
        """The exact prompt tokens a call would evaluate, or None without a template."""
        if self._formatter is None:
            return None
        rendered = self._formatter(messages=_chat_messages(request))
        return list(
            llm.tokenize(
                rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True
            )
        )

    def count_tokens(self, request: ModelRequest) -> int:
        """Prompt tokens of `request` after chat formatting (exact with a GGUF template)."""
        llm = self._load()
        # Tokenizing only reads the vocabulary, so it is safe while a call decodes.
        tokens = self._prompt_tokens(llm, request)
        if tokens is not None:
            return len(tokens)
        content = sum(
            len(llm.tokenize(m.content.encode("utf-8"), add_bos=False, special=False))
            for m in request.messages
        )
        return content + _FALLBACK_PER_MESSAGE * (len(request.messages) + 1)

    # -- Model ---------------------------------------------------------------------

    def _async_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._async_locks.get(loop)
        if lock is None:
            lock = self._async_locks[loop] = asyncio.Lock()
        return lock

    async def complete(self, request: ModelRequest) -> Completion:
        """Answer `request` in a worker thread; one call at a time per model."""
        ensure_real_models_allowed(self.name)
        # Build the grammar text before queueing so schema mistakes fail fast.
        gbnf = schema_to_gbnf(request.json_schema) if request.json_schema is not None else None
        async with self._async_lock():
            return await asyncio.to_thread(self._complete_blocking, request, gbnf)

    def _complete_blocking(self, request: ModelRequest, gbnf: str | None) -> Completion:
        llm = self._load()
        with self._run_lock:
            grammar = self._grammar(llm, gbnf) if gbnf is not None else None
            if not self.prefix_cache:
                cast(Any, llm).reset()  # untyped upstream
            # What the KV cache holds before this call: needed to tell how much of the
            # prompt llama-cpp-python reuses instead of evaluating.
            before = llm._input_ids.tolist()
            fresh_logits = not llm._requires_eval
            started = time.perf_counter()
            try:
                response: Any = llm.create_chat_completion(
                    messages=_chat_messages(request),
                    temperature=request.temperature,
                    seed=request.seed,
                    max_tokens=request.max_tokens,
                    stop=list(request.stop) or None,
                    grammar=grammar,
                    repeat_penalty=self.repeat_penalty,
                )
            except Exception as exc:
                raise ModelError(f"llama.cpp call failed ({self.name}): {exc}") from exc
            latency = time.perf_counter() - started
            usage = response["usage"]
            prompt_tokens = int(usage["prompt_tokens"])
            # After the call the context starts with this call's prompt tokens.
            prompt_ids = llm.input_ids[:prompt_tokens].tolist()
            cached = reused_prefix(before, prompt_ids, fresh_logits=fresh_logits)

        choice = response["choices"][0]
        return Completion(
            text=choice["message"].get("content") or "",
            usage=Usage(
                calls=1,
                prompt_tokens=prompt_tokens,
                completion_tokens=int(usage["completion_tokens"]),
                cached_prompt_tokens=cached,
            ),
            latency_s=latency,
            model=self.name,
            finish_reason=choice.get("finish_reason") or "stop",
        )


_params_lock = threading.Lock()


@contextlib.contextmanager
def extra_bufts_default(extra_bufts: bool) -> Iterator[None]:
    """While open, every `Llama` built in this process loads with `use_extra_bufts` so set.

    llama-cpp-python 0.3.x does not expose `use_extra_bufts`; `Llama.__init__` (and its
    server) start from `llama_model_default_params()`, so this swaps that function for
    one that hands out the defaults with the flag set. Process-wide, hence the lock.
    """
    try:
        import llama_cpp.llama_cpp as lib
    except ImportError as exc:
        raise ConfigError(
            "llama-cpp-python is not installed: pip install 'guardsearch[embedded]'"
        ) from exc
    if "use_extra_bufts" not in {field[0] for field in lib.llama_model_params._fields_}:
        if not extra_bufts:
            raise ConfigError(
                "this llama-cpp-python has no use_extra_bufts model parameter; "
                "extra_bufts=off needs llama-cpp-python >= 0.3.10"
            )
        yield
        return
    with _params_lock:
        original = lib.llama_model_default_params

        def defaults() -> Any:
            params = original()
            params.use_extra_bufts = extra_bufts
            return params

        lib.llama_model_default_params = defaults
        try:
            yield
        finally:
            lib.llama_model_default_params = original


def load_llama(path: Path, *, extra_bufts: bool, n_ctx: int, n_threads: int) -> Llama:
    """A `Llama` for `path`, with llama.cpp's extra buffer types on or off."""
    with extra_bufts_default(extra_bufts):
        from llama_cpp import Llama

        try:
            return Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                verbose=False,
            )
        except Exception as exc:
            raise ModelError(f"llama.cpp could not load {path}: {exc}") from exc


def _use_lazy_grammar(llm: Llama) -> None:
    """Make `llm` check the grammar only against the token it would pick anyway.

    `Llama.generate` builds a fresh sampler per call through `_init_sampler`; this
    instance-level override hands it a `_LazyGrammarSampler` whenever a grammar is set.
    """
    original = llm._init_sampler

    def init_sampler(*, grammar: LlamaGrammar | None = None, **kwargs: Any) -> Any:
        chain = original(grammar=None, **kwargs)
        return chain if grammar is None else _LazyGrammarSampler(llm, chain, grammar)

    llm._init_sampler = init_sampler  # type: ignore[method-assign,assignment]


class _LazyGrammarSampler:
    """A grammar-constrained sampler that masks the whole vocabulary only when it must.

    llama-cpp-python puts the grammar in the sampler chain, so every token runs the
    grammar over all ~150k candidates: ~25 ms per token here, about as long as the
    0.5B model's forward pass. Like llama.cpp's own `common_sampler`, this samples
    with the unconstrained chain first, asks the grammar about that single token, and
    only on rejection masks the full vocabulary and samples again. Greedy decoding
    gives exactly the tokens of the eager version; with temperature the result still
    follows the grammar-restricted distribution.
    """

    def __init__(self, llm: Llama, chain: Any, grammar: LlamaGrammar) -> None:
        import llama_cpp
        import numpy as np

        self._lib = llama_cpp
        self._chain = chain  # a LlamaSampler; it frees its own chain
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            llm._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self._grammar:
            raise ModelError("llama.cpp rejected the grammar")
        self._n_vocab = llm.n_vocab()
        self._all = (llama_cpp.llama_token_data * self._n_vocab)()
        self._all_view = np.frombuffer(
            memoryview(self._all),
            dtype=np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)]),
        )
        self._ids = np.arange(self._n_vocab, dtype=np.int32)
        self._one = (llama_cpp.llama_token_data * 1)()

    def __del__(self) -> None:
        grammar, self._grammar = getattr(self, "_grammar", None), None
        if grammar:
            self._lib.llama_sampler_free(grammar)

    def _full(self, ctx: Any, idx: int) -> Any:
        import numpy as np

        logits = self._lib.llama_get_logits_ith(ctx.ctx, idx)
        if not logits:
            raise ModelError(f"llama.cpp has no logits at index {idx}")
        self._all_view["id"] = self._ids
        self._all_view["logit"] = np.ctypeslib.as_array(logits, shape=(self._n_vocab,))
        self._all_view["p"] = 0.0
        return self._lib.llama_token_data_array(
            data=self._all, size=self._n_vocab, selected=-1, sorted=False
        )

    def _pick(self, candidates: Any, *samplers: Any) -> int:
        import ctypes

        for sampler in samplers:
            self._lib.llama_sampler_apply(sampler, ctypes.byref(candidates))
        if not 0 <= candidates.selected < candidates.size:
            raise ModelError("llama.cpp sampler selected no token")
        return int(candidates.data[candidates.selected].id)

    def _grammar_allows(self, token: int) -> bool:
        import ctypes
        import math

        self._one[0] = self._lib.llama_token_data(token, 0.0, 0.0)
        single = self._lib.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        self._lib.llama_sampler_apply(self._grammar, ctypes.byref(single))
        return not math.isinf(self._one[0].logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """Pick the next token (the same call signature as `LlamaSampler.sample`)."""
        token = self._pick(self._full(ctx, idx), self._chain.sampler)
        if not self._grammar_allows(token):
            token = self._pick(self._full(ctx, idx), self._grammar, self._chain.sampler)
        self._lib.llama_sampler_accept(self._grammar, token)
        self._lib.llama_sampler_accept(self._chain.sampler, token)
        return token


def reused_prefix(before: Sequence[int], prompt: Sequence[int], *, fresh_logits: bool) -> int:
    """How many `prompt` tokens llama-cpp-python takes from the KV cache instead of evaluating.

    Mirrors `Llama.generate` (0.3.x): it keeps the longest common prefix of the cached
    tokens and the prompt; when the whole prompt is cached it still re-evaluates the
    last token to get fresh logits, unless the cache is exactly the prompt and its
    logits came from a live decode.
    """
    common = 0
    for a, b in zip(before, prompt, strict=False):
        if a != b:
            break
        common += 1
    if prompt and common == len(prompt):
        if len(before) == len(prompt) and fresh_logits:
            return common
        return common - 1
    return common


def available_cpus() -> int:
    # The CPUs this process may run on (a container's cpuset), not the host's count:
    # llama.cpp threads that outnumber the usable cores slow it down badly.
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _chat_messages(request: ModelRequest) -> list[Any]:
    return [{"role": m.role, "content": m.content} for m in request.messages]
