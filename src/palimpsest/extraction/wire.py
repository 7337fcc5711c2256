"""The two protocols a model host speaks, as request bodies and answers (no I/O here).

- ``openai``: Chat Completions (OpenAI, vLLM, Ollama, llama.cpp's server and most hosts).
  ``POST <url>/chat/completions``; the answer is forced into the schema by
  ``response_format: json_schema`` (strict), and arrives as the message's JSON content.
- ``anthropic``: the Messages API. ``POST <url>/v1/messages``; the answer is a forced call of
  one tool whose ``input_schema`` is the schema, and arrives as that ``tool_use`` block's input.

``answer`` reads a 200 body and refuses anything but a complete answer in the schema's outer
shape: a refusal, prose, JSON cut short by the token cap, a missing tool call. What the answer
says is checked later (``extraction.candidates``): nothing in it is trusted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

TOOL_NAME = "record_facts"  # the extractor's; the judge names its own (``Tool``)
TOOL_DESCRIPTION = "Record the facts the conversation states."
ANTHROPIC_VERSION = "2023-06-01"


class Protocol(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"


class BadAnswer(Exception):
    """A 200 answer that is not a complete answer in the schema; ``reason`` names why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Tool:
    """The name the answer's schema goes by: the structured output's name for Chat
    Completions, the forced tool's for the Messages API."""

    name: str = TOOL_NAME
    description: str = TOOL_DESCRIPTION


EXTRACT = Tool()


@dataclass(frozen=True, slots=True)
class Answer:
    payload: dict[str, Any]
    tokens_in: int
    tokens_out: int


def endpoint(protocol: Protocol, base_url: str) -> str:
    base = base_url.rstrip("/")
    if protocol is Protocol.OPENAI:
        return f"{base}/chat/completions"
    return f"{base}/v1/messages"


def headers(protocol: Protocol, api_key: str | None) -> dict[str, str]:
    out = {"content-type": "application/json", "accept": "application/json"}
    if protocol is Protocol.OPENAI:
        if api_key:
            out["authorization"] = f"Bearer {api_key}"
    else:
        out["anthropic-version"] = ANTHROPIC_VERSION
        if api_key:
            out["x-api-key"] = api_key
    return out


def body(
    protocol: Protocol,
    model: str,
    system: str,
    user: str,
    schema: dict[str, Any],
    max_tokens: int,
    tool: Tool = EXTRACT,
) -> dict[str, Any]:
    """One tool-less call (the Messages API's forced tool is only its way to a schema)."""
    if protocol is Protocol.OPENAI:
        return {
            "model": model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": tool.name, "strict": True, "schema": schema},
            },
            "max_tokens": max_tokens,
            "temperature": 0,
        }
    return {
        "model": model,
        "max_tokens": max_tokens,
        "temperature": 0,
        "system": system,
        "messages": [{"role": "user", "content": user}],
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": schema,
            }
        ],
        "tool_choice": {"type": "tool", "name": tool.name},
    }


def answer(protocol: Protocol, raw: bytes, tool: Tool = EXTRACT) -> Answer:
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise BadAnswer("the body is not JSON") from e
    if not isinstance(data, dict):
        raise BadAnswer("the body is not a JSON object")
    if protocol is Protocol.OPENAI:
        return _chat_completion(data)
    return _message(data, tool.name)


def _chat_completion(data: dict[str, Any]) -> Answer:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadAnswer("no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise BadAnswer("no message")
    if message.get("refusal"):
        raise BadAnswer("refusal")
    if choice.get("finish_reason") == "length":
        raise BadAnswer("truncated: the answer reached the token cap")
    if choice.get("finish_reason") == "content_filter":
        raise BadAnswer("refusal")
    content = message.get("content")
    if not isinstance(content, str):
        raise BadAnswer("no content")
    payload = _json_object(content)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Answer(payload, _count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))


def _message(data: dict[str, Any], tool_name: str) -> Answer:
    stop = data.get("stop_reason")
    if stop == "refusal":
        raise BadAnswer("refusal")
    if stop == "max_tokens":
        raise BadAnswer("truncated: the answer reached the token cap")
    content = data.get("content")
    if not isinstance(content, list):
        raise BadAnswer("no content")
    calls = [
        b
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == tool_name
    ]
    if not calls:
        raise BadAnswer("prose: no tool call")
    payload = calls[0].get("input")
    if not isinstance(payload, dict):
        raise BadAnswer("the tool call's input is not an object")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Answer(payload, _count(usage, "input_tokens"), _count(usage, "output_tokens"))


def _json_object(text: str) -> dict[str, Any]:
    try:
        payload = json.loads(text)
    except ValueError as e:
        raise BadAnswer("prose or truncated JSON") from e
    if not isinstance(payload, dict):
        raise BadAnswer("the answer is not a JSON object")
    return payload


def _count(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def error_kind(raw: bytes) -> str | None:
    """The error's type as both protocols name it (never its message: a host may quote the
    key in it, masked or not)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return None
    kind = error.get("type") or error.get("code")
    return kind[:64] if isinstance(kind, str) and kind.replace("_", "").isalnum() else None
