"""The types of the agent tools' parameters: each becomes part of a tool's JSON schema.

A tool's annotated parameters are what an MCP client sees (`agent.AgentMemory`):
the bounds and descriptions here are checked by the server before a call runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from memcommit.model import KINDS

Kind = Literal[KINDS]  # type: ignore[valid-type]
Text = Annotated[str, Field(min_length=1, max_length=1_000_000)]
Scope = Annotated[str, Field(min_length=1, description="Partition of memory, e.g. 'shared'.")]
Importance = Annotated[float, Field(ge=0.0, le=1.0, description="0 (trivia) to 1 (critical).")]
Tags = Annotated[list[str], Field(description="Free-form labels.")]
Metadata = Annotated[dict[str, Any] | None, Field(description="Any JSON object to keep alongside.")]


RequestId = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=200,
        description="Any unique string per intended write; a retry (the same tool with the"
        " same arguments and this id) returns the first answer and writes nothing again.",
    ),
]


class PoolSpec(BaseModel):
    """A reserved budget inside the context for some kinds of memory."""

    name: Annotated[str, Field(min_length=1)]
    max_tokens: Annotated[int, Field(ge=0)]
    max_entries: Annotated[int, Field(ge=0)]
    kinds: list[Kind] | None = Field(default=None, description="Kinds it draws from; all if null.")
