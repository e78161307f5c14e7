"""Response shapes and error bodies as OpenAI-compatible servers send them (recorded).

Each body is what the server answered to a chat completion; the headers are the ones
that matter to a client (Retry-After). Sources: the servers' own responses (the
llama-cpp-python bodies from its 0.3.36 server on the embedded GGUF; the others from
their API references and captured exchanges).
"""

from __future__ import annotations

from typing import Any

OPENAI_OK: dict[str, Any] = {
    "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
    "object": "chat.completion",
    "created": 1741570283,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": '{"word": "Hello"}', "refusal": None},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {
        "prompt_tokens": 1117,
        "completion_tokens": 46,
        "total_tokens": 1163,
        "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "accepted_prediction_tokens": 0},
    },
    "service_tier": "default",
    "system_fingerprint": "fp_06737a9306",
}
OPENAI_429: dict[str, Any] = {
    "error": {
        "message": "Rate limit reached for gpt-4o-mini in organization org-x on requests per "
        "min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
OPENAI_SCHEMA_400: dict[str, Any] = {
    "error": {
        "message": "Invalid schema for response_format 'output': In context=(), 'required' is "
        "required to be supplied and to be an array including every key in properties.",
        "type": "invalid_request_error",
        "param": "response_format",
        "code": None,
    }
}

VLLM_OK: dict[str, Any] = {
    "id": "chatcmpl-5b0d1d0c8c6f4b8e",
    "object": "chat.completion",
    "created": 1735000000,
    "model": "Qwen/Qwen2.5-7B-Instruct",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "reasoning_content": None,
                "content": '{"word": "Hello"}',
                "tool_calls": [],
            },
            "logprobs": None,
            "finish_reason": "stop",
            "stop_reason": None,
        }
    ],
    "usage": {
        "prompt_tokens": 35,
        "total_tokens": 41,
        "completion_tokens": 6,
        "prompt_tokens_details": None,
    },
    "prompt_logprobs": None,
}
VLLM_500: dict[str, Any] = {
    "object": "error",
    "message": "The engine is dead: EngineDeadError",
    "type": "InternalServerError",
    "param": None,
    "code": 500,
}
# An older vLLM without response_format json_schema: pydantic's literal error.
VLLM_OLD_400: dict[str, Any] = {
    "object": "error",
    "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}

OLLAMA_OK: dict[str, Any] = {
    "id": "chatcmpl-432",
    "object": "chat.completion",
    "created": 1735000000,
    "model": "qwen2.5:7b",
    "system_fingerprint": "fp_ollama",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": '{"word": "Hello"}'},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 33, "completion_tokens": 7, "total_tokens": 40},
}
OLLAMA_404: dict[str, Any] = {
    "error": {
        "message": 'model "qwen2.5:7b" not found, try pulling it first',
        "type": "api_error",
        "param": None,
        "code": None,
    }
}

LLAMA_CPP_PYTHON_OK: dict[str, Any] = {
    "id": "chatcmpl-3f1e6b7e-0c1a-4d7e-9a55-2d0f0b1c9e11",
    "object": "chat.completion",
    "created": 1764064000,
    "model": "qwen",
    "choices": [
        {
            "index": 0,
            "message": {"content": '{"word": "Hello"}', "role": "assistant"},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 34, "completion_tokens": 7, "total_tokens": 41},
}
# llama-cpp-python's server validates the request with pydantic and answers a refused
# `response_format` with HTTP 500 (the error the issue reports).
LLAMA_CPP_PYTHON_500: dict[str, Any] = {
    "error": {
        "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
        "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
        "'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
        '  File "/usr/lib/python3.11/site-packages/llama_cpp/server/app.py", line 376, in '
        "create_chat_completion\n    POST /v1/chat/completions",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}

LLAMA_SERVER_OK: dict[str, Any] = {
    "choices": [
        {
            "finish_reason": "stop",
            "index": 0,
            "message": {"role": "assistant", "content": '{"word": "Hello"}'},
        }
    ],
    "created": 1764064000,
    "model": "qwen",
    "system_fingerprint": "b4000-abc",
    "object": "chat.completion",
    "usage": {"completion_tokens": 7, "prompt_tokens": 34, "total_tokens": 41},
    "id": "chatcmpl-xyz",
    "timings": {
        "prompt_n": 10,
        "prompt_ms": 80.5,
        "prompt_per_second": 124.2,
        "predicted_n": 7,
        "predicted_ms": 170.0,
        "predicted_per_second": 41.2,
        "cache_n": 24,
    },
}
