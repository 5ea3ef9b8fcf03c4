"""Recall's optional semantic index: embeddings of saved messages, fused with the words.

Off unless `TOOLNEXUS_EMBEDDINGS_URL` names an OpenAI-compatible API (its base
URL, as the `openai` SDK takes it: `https://api.openai.com/v1`, or a local
server's); `TOOLNEXUS_EMBEDDINGS_MODEL` picks the model (default
`text-embedding-3-small`) and the key comes from `TOOLNEXUS_EMBEDDINGS_KEY`,
else `OPENAI_API_KEY`. Needs the `semantic` extra (`openai`, `numpy`).

The index lives with the messages, in the home's store, one vector per message
and model, and is built as recall goes: each recall first embeds messages that
have none yet, newest first, for at most `BUILD_SECONDS`, so a large home is
covered over a few searches and a new message soon after it is saved. A search
then ranks every embedded message by cosine similarity to the query, and the
two lists are fused by reciprocal rank (`fuse`). When the endpoint cannot be
reached (or the extra is missing), recall answers with the words alone and says
so in one line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..store._protocol import Talk
from ..store._sessions import Line
from ._rank import Ranked

__all__ = ["BUILD_SECONDS", "Embeddings", "IndexNotKept", "fuse", "semantic_ranks"]


class IndexNotKept(Exception):
    """The home's store could not keep or read the vectors (the endpoint answered)."""


#: At most this long is spent embedding unindexed messages in one recall.
BUILD_SECONDS = 2.0
#: Messages sent to the endpoint in one request, and the most characters of each.
BATCH = 64
MAX_CHARS = 8_000
#: The most semantic neighbours of a query fused with the words' ranking.
TOP = 50
#: Reciprocal rank fusion's constant: a rank r counts 1 / (RRF_K + r).
RRF_K = 60
#: The model asked for when `TOOLNEXUS_EMBEDDINGS_MODEL` names none.
DEFAULT_MODEL = "text-embedding-3-small"
#: How long one request to the endpoint may take.
TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Embeddings:
    """An OpenAI-compatible `/v1/embeddings` endpoint and the model to ask."""

    base_url: str
    model: str = DEFAULT_MODEL
    api_key: str = "none"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Embeddings | None:
        """The endpoint the environment names (None: the semantic index is off)."""
        env = os.environ if env is None else env
        url = env.get("TOOLNEXUS_EMBEDDINGS_URL", "").strip()
        if not url:
            return None
        model = env.get("TOOLNEXUS_EMBEDDINGS_MODEL", "").strip() or DEFAULT_MODEL
        key = env.get("TOOLNEXUS_EMBEDDINGS_KEY") or env.get("OPENAI_API_KEY") or "none"
        return cls(url, model, key)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order.

        Raises:
            ImportError: when the `openai` SDK is not installed.
            Exception: whatever the SDK raises for an endpoint that fails.
        """
        from openai import OpenAI

        client = OpenAI(
            base_url=self.base_url,
            api_key=self.api_key,
            timeout=TIMEOUT_SECONDS,
            max_retries=0,
        )
        reply = client.embeddings.create(model=self.model, input=list(texts))
        ordered = sorted(reply.data, key=lambda d: d.index)
        return [list(d.embedding) for d in ordered]


def _vector_bytes(values: Sequence[float]) -> bytes:
    import numpy as np

    array = np.asarray(values, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return (array / norm if norm else array).tobytes()


def semantic_ranks(
    talk: Talk,
    embeddings: Embeddings,
    query: str,
    *,
    exclude: str | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[tuple[str, int]]:
    """The messages closest in meaning to `query`, best first (at most `TOP`), after
    embedding up to `BUILD_SECONDS` worth of messages that have no vector yet.

    Raises:
        ImportError: when the `semantic` extra is not installed.
        Exception: when the endpoint fails (the caller falls back to the words).
    """
    import numpy as np

    deadline = clock() + BUILD_SECONDS
    while clock() < deadline:
        batch = talk.unembedded(embeddings.model, limit=BATCH)
        if not batch:
            break
        vectors = embeddings.embed([text[:MAX_CHARS] for _, text in batch])
        try:
            talk.put_vectors(
                embeddings.model,
                [(key, _vector_bytes(v)) for (key, _), v in zip(batch, vectors, strict=True)],
            )
        except Exception as exc:  # a read-only home, a full disk: not the endpoint's fault
            raise IndexNotKept(str(exc)) from exc
    [asked] = embeddings.embed([query[:MAX_CHARS]])
    target = np.frombuffer(_vector_bytes(asked), dtype=np.float32)
    kept = [(key, v) for key, v in talk.vectors(embeddings.model) if key[0] != exclude]
    if not kept:
        return []
    matrix = np.frombuffer(b"".join(v for _, v in kept), dtype=np.float32)
    if matrix.size != len(kept) * target.size:
        raise ValueError(
            f"the kept vectors are not of the {target.size} dimensions {embeddings.model} gives "
            "now: the model changed under the same name; name the new one in "
            "TOOLNEXUS_EMBEDDINGS_MODEL"
        )
    scores = matrix.reshape(len(kept), target.size) @ target
    best = np.argsort(-scores)[:TOP]
    return [kept[int(i)][0] for i in best]


def fuse(
    ranked: Sequence[Ranked],
    semantic: Sequence[tuple[str, int]],
    lines: Callable[[Sequence[tuple[str, int]]], Mapping[tuple[str, int], Line]],
) -> list[Ranked]:
    """The words' ranking and the semantic one as one list, by reciprocal rank fusion:
    each item scores 1 / (60 + its rank) in each list it is in."""
    score: dict[Any, float] = {}
    items: dict[Any, Ranked] = {}
    for rank, r in enumerate(ranked, start=1):
        key = r.key if r.key is not None else ("change", r.change.ref if r.change else 0)
        score[key] = score.get(key, 0.0) + 1.0 / (RRF_K + rank)
        items[key] = r
    only = [key for key in semantic if key not in items]
    shown = lines(only) if only else {}
    for rank, key in enumerate(semantic, start=1):
        if key not in items:
            line = shown.get(key)
            if line is None:
                continue
            items[key] = Ranked(0.0, line.time, key=key)
        score[key] = score.get(key, 0.0) + 1.0 / (RRF_K + rank)
    fused = [
        Ranked(score[k], items[k].time, key=items[k].key, change=items[k].change) for k in items
    ]
    fused.sort(key=lambda r: (r.score, r.time), reverse=True)
    return fused
