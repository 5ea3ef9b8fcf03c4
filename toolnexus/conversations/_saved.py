"""Saved conversations and recall: what a persona has lived, kept in its home.

A session started by a `from_dir` agent saves its messages as it goes into the
home's `.toolnexus/` state database (a crash loses at most the turn in flight),
so a conversation can be listed, shown, exported, resumed and searched later.
`recall_tool` lets the persona search its past conversations and its memory
history itself; what it finds comes back as a tool result, so the running
session's system prompt never changes.
"""

from __future__ import annotations

import builtins
import functools
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from ..errors import ArgumentError, ConversationError, HistoryError, HomeError, StoreError
from ..models._base import Message, Usage
from ..models._chat import chat_problem, from_chat
from ..scanner._scanner import DEFAULT
from ..store._config import configured_store
from ..store._protocol import Talk
from ..store._sessions import Found, Imported, Line, Meta
from ._chatfile import imported, read_chat_file, read_chat_lines, time_problem, to_records
from ._query import RecallQuery, parse_query
from ._rank import MATCH_CAP, Ranked, rank_history, rank_messages, snippet_of, weights
from ._semantic import Embeddings, IndexNotKept, fuse, semantic_ranks

__all__ = [
    "DEFAULT_RECALL_LIMIT",
    "Conversations",
    "Hit",
    "SavedSession",
    "Transcript",
    "Turn",
    "read_chat_file",
]

_log = logging.getLogger("toolnexus.recall")

#: Hits the recall tool returns unless asked for more.
DEFAULT_RECALL_LIMIT = 5
#: The most hits one recall returns.
MAX_RECALL_LIMIT = 50
#: The most turns one recall hit spans when neighbouring hits are merged into it.
MERGED_SPAN = 5
#: A neighbour is merged into a hit (marked found) when it scores at least this share of
#: the hit, and ranks within the first `limit` × MERGE_LOOK messages.
MERGE_SCORE = 0.5
MERGE_LOOK = 3
#: Messages saved per transaction by a large import.
_IMPORT_CHUNK = 20_000

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def _errors(home: Path) -> Iterator[None]:
    """Report an unusable state database as a ConversationError (kind `state`)."""
    try:
        with configured_store(home).failures():
            yield
    except (HistoryError, StoreError, HomeError) as exc:
        raise ConversationError(str(exc), kind="state") from None


def talk(home: Path, *, create: bool = False) -> Talk | None:
    """`home`'s saved conversations, in the store it uses (None: none kept yet, and
    not `create`)."""
    return configured_store(home).talk(create=create)


def _guarded(method: F) -> F:
    """`_errors` around a method of `Conversations`."""

    @functools.wraps(method)
    def guarded(self: Conversations, *args: Any, **kwargs: Any) -> Any:
        with _errors(self.dir):
            return method(self, *args, **kwargs)

    return cast(F, guarded)


@dataclass(frozen=True, slots=True)
class SavedSession:
    """A saved conversation as `sessions list` shows it.

    `soul_digest` is the digest of the soul it last ran with (empty for an imported
    one); `origin` is `live` (saved as it went) or `import`; `usage` sums the tokens
    its model responses reported.
    """

    id: str
    started: str
    ended: str
    model: str | None
    soul_digest: str
    title: str
    messages: int
    origin: str
    usage: Usage

    def to_json(self) -> dict[str, object]:
        """The fields as `sessions list --json` prints them (`usage` as an object)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Turn:
    """A message around a recall hit: its place in the conversation (`seq`), time, role,
    speaker (`name`, when the chat named one) and text; `hit`: it is one the query found
    (hits next to each other are merged into one window). Text the memory scanner holds
    back is replaced by why."""

    seq: int
    time: str
    role: str
    name: str
    text: str
    hit: bool = False


@dataclass(frozen=True, slots=True)
class Hit:
    """One thing recall found, best first.

    `kind` is `conversation` (a saved message; `role` is `user`, `assistant` or
    `tool`) or `memory` (a change to a memory file; `role` is `memory <target>
    <action>` and `change` its id in the history). `session` is the conversation
    it happened in, when known. `withheld` is why the memory scanner kept the
    snippet back (then `snippet` is empty), or None. `window` holds a
    conversation hit's message with the turn before and after it (and any
    neighbouring hit merged into it); `seq` is the message's place.
    """

    kind: Literal["conversation", "memory"]
    session: str | None
    time: str
    role: str
    snippet: str
    change: int | None = None
    withheld: str | None = None
    window: tuple[Turn, ...] = ()
    seq: int | None = None

    def to_json(self) -> dict[str, object]:
        """The fields as `recall --json` prints them: the hit's, and its `window` (a list
        of turns: `seq`, `time`, `role`, `name`, `text`, `hit`)."""
        data = asdict(self)
        data.pop("seq")  # in the window: the turns marked `hit`
        return data


class Transcript:
    """Saves one session's messages into its home as the session goes.

    Built by `Agent.session()` for a home that keeps conversations; the session
    calls `save` with each batch of new messages. Nothing is created until the
    first message is saved.
    """

    __slots__ = ("_started", "dir", "model", "session", "soul_digest")

    def __init__(
        self,
        dir: str | os.PathLike[str],
        *,
        session: str,
        soul_digest: str,
        model: str | None,
        resumed: bool = False,
    ) -> None:
        self.dir = Path(os.path.abspath(dir))
        self.session = session
        self.soul_digest = soul_digest
        self.model = model
        # Once the conversation is saved, it is never created again: a conversation
        # removed while it runs stays removed.
        self._started = resumed

    @property
    def started(self) -> bool:
        """Whether the conversation exists in the home (saved, or resumed)."""
        return self._started

    def save(self, messages: Sequence[Message]) -> None:
        """Append `messages` to the saved conversation (one transaction).

        Raises:
            ConversationError: (kind `state`) when the state database cannot be used;
                (kind `not_found`) when the conversation was removed while it ran.
        """
        if not messages:
            return
        with _errors(self.dir):
            where = talk(self.dir, create=True)
            assert where is not None
            kept = where.save(
                session=self.session,
                model=self.model,
                soul=self.soul_digest,
                records=to_records(messages),
                create=not self._started,
            )
        if not kept:
            raise ConversationError(
                f"conversation {self.session} was removed while it ran: the rest of it "
                "is not saved",
                kind="not_found",
            )
        self._started = True


class Conversations:
    """The saved conversations of the home `dir`: list, read, export, import, remove, recall.

    Reading never creates anything: a home without saved conversations simply
    has none. Ids may be shortened to any unique prefix.
    """

    __slots__ = ("dir",)

    def __init__(self, dir: str | os.PathLike[str]) -> None:
        self.dir = Path(os.path.abspath(dir))

    def __repr__(self) -> str:
        return f"Conversations({str(self.dir)!r})"

    def _talk(self, *, create: bool = False) -> Talk | None:
        return talk(self.dir, create=create)

    @_guarded
    def list(self, *, limit: int | None = None) -> list[SavedSession]:
        """Saved sessions, the most recently started first (every one unless `limit`).

        Raises:
            ArgumentError: when `limit` is below 1.
            ConversationError: (kind `state`) when the state database cannot be used.
        """
        if limit is not None and (isinstance(limit, bool) or limit < 1):
            raise ArgumentError(f"limit must be 1 or more, got {limit!r}")
        where = self._talk()
        if where is None:
            return []
        return [_saved(meta) for meta in where.sessions(limit=limit)]

    @_guarded
    def latest(self) -> SavedSession | None:
        """The saved session most recently active (what `chat --continue` continues),
        or None when there is none."""
        where = self._talk()
        found = where.latest() if where is not None else None
        return _saved(found) if found is not None else None

    @_guarded
    def get(self, id: str) -> SavedSession:
        """The saved session `id` (or a unique prefix of it).

        Raises:
            ConversationError: `not_found` or `ambiguous` (the candidates are named).
        """
        where = self._talk()
        session = self._resolve(where, id)
        assert where is not None
        meta = where.meta(session)
        if meta is None:  # removed since it was found
            raise ConversationError(f"no saved session {id!r} in {self.dir}", kind="not_found")
        return _saved(meta)

    @_guarded
    def messages(self, id: str) -> tuple[Message, ...]:
        """The messages a resumed session starts from: the saved ones, without system
        messages, with every tool call answered.

        Raises:
            ConversationError: `not_found` or `ambiguous`.
        """
        where = self._talk()
        session = self._resolve(where, id)
        assert where is not None
        stored = where.messages(session)
        return tuple(from_chat((json.loads(m.data), m.is_error) for m in stored))

    @_guarded
    def export(self, id: str) -> builtins.list[dict[str, Any]]:
        """The saved session's messages in the OpenAI chat format, exactly as saved.

        Raises:
            ConversationError: `not_found` or `ambiguous`.
        """
        where = self._talk()
        session = self._resolve(where, id)
        assert where is not None
        return [json.loads(m.data) for m in where.messages(session)]

    @_guarded
    def import_messages(
        self, messages: Sequence[Mapping[str, Any]], *, title: str = "", where: str = "messages"
    ) -> tuple[str, bool]:
        """Save a conversation from chat-format messages; `(id, new)`.

        The same messages imported twice are one conversation: the second time
        returns the first one's id and `new` is False.

        Raises:
            ConversationError: (kind `invalid`) naming each message that is not a
                chat-format message (`where:N: rule`); nothing is saved then.
        """
        problems = [
            f"{where}:{n}: {why}"
            for n, value in enumerate(messages, start=1)
            if (why := chat_problem(value) or time_problem(value)) is not None
        ]
        if not messages:
            problems.append(f"{where}: no messages: a conversation has at least one")
        if problems:
            raise ConversationError.of(problems, kind="invalid")
        [done] = self._save_imports([imported(messages, title)])
        return done

    def import_file(self, path: str | os.PathLike[str]) -> tuple[str, bool]:
        """Save the conversation in a JSONL file (one chat-format message per line).

        Returns `(id, new)` as `import_messages` does.

        Raises:
            ConversationError: (kind `invalid`) naming the file, line and rule, or
                why the file cannot be read.
        """
        [done] = self.import_files([path])
        return done

    @_guarded
    def import_files(
        self, paths: Sequence[str | os.PathLike[str]]
    ) -> builtins.list[tuple[str, bool]]:
        """Save the conversation in each JSONL file; `(id, new)` for each, in order.

        Every file is read and checked before any is saved: one bad line in one
        file means nothing is imported. What is saved goes in a few large
        transactions, so a big import is quick.

        Raises:
            ConversationError: (kind `invalid`) naming every bad file, line and rule.
        """
        read: builtins.list[builtins.list[tuple[str, Any]]] = []
        problems: builtins.list[str] = []
        for path in paths:
            try:
                read.append(read_chat_lines(path))
            except ConversationError as exc:
                problems.extend(exc.problems)
        if problems:
            raise ConversationError.of(problems, kind="invalid")
        return self._save_imports(
            [
                imported([value for _, value in pairs], lines=[line for line, _ in pairs])
                for pairs in read
            ]
        )

    def _save_imports(self, batch: Sequence[Imported]) -> builtins.list[tuple[str, bool]]:
        where = self._talk(create=True)
        assert where is not None
        done: builtins.list[tuple[str, bool]] = []
        start = size = 0
        # One transaction per ~20,000 messages: quick, yet never holding the write
        # lock long enough to stall a live session saving its turn.
        for end, item in enumerate(batch, start=1):
            size += len(item.records)
            if size >= _IMPORT_CHUNK or end == len(batch):
                done.extend(where.import_conversations(batch[start:end]))
                start, size = end, 0
        return done

    @_guarded
    def remove(self, id: str) -> tuple[str, int]:
        """Delete a saved session and its messages for good; `(id, messages removed)`.

        Raises:
            ConversationError: `not_found` or `ambiguous`.
        """
        where = self._talk()
        session = self._resolve(where, id)
        assert where is not None
        return session, where.remove(session)

    @_guarded
    def recall(
        self,
        query: str,
        *,
        limit: int = DEFAULT_RECALL_LIMIT,
        exclude: str | None = None,
        now: datetime | None = None,
    ) -> builtins.list[Hit]:
        """Search saved messages and the memory history; the best `limit` hits, best first.

        One ranked list (`_rank`): every message that holds any of the query's
        words counts, scored with the turns around it; stop and question words
        are not searched, rarer words weigh more, a quoted phrase is one thing
        to find, a word ending in `*` matches as a prefix, a speaker the query
        names and a date or time phrase in it ("in May", "2023-05-07", "last
        week", read against `now`) raise what matches them, and the newer wins
        a tie. Hits next to each other in one conversation are merged. Nothing
        in `query` is search syntax, so no text can make it fail. `exclude`
        leaves out one session's messages (the one asking). Text the memory
        scanner holds back is withheld.

        With `TOOLNEXUS_EMBEDDINGS_URL` set (the `semantic` extra), a semantic
        index is fused in (`_semantic`); when its endpoint fails, the words alone
        answer, and the reason is logged (`toolnexus.recall`) and, through the
        recall tool and the command line, shown in one line.

        Raises:
            ArgumentError: when `limit` is not between 1 and 50.
        """
        hits, notes = self.recall_noted(query, limit=limit, exclude=exclude, now=now)
        for note in notes:
            _log.warning("%s", note)
        return hits

    @_guarded
    def recall_noted(
        self,
        query: str,
        *,
        limit: int = DEFAULT_RECALL_LIMIT,
        exclude: str | None = None,
        now: datetime | None = None,
    ) -> tuple[builtins.list[Hit], builtins.list[str]]:
        """`recall`, and a line for each thing that did not work as asked (the semantic
        index unreachable: the words alone answered).

        Raises:
            ArgumentError: when `limit` is not between 1 and 50.
        """
        if not isinstance(limit, int):
            raise TypeError(f"limit is a whole number, got {type(limit).__name__}")
        if isinstance(limit, bool) or not 1 <= limit <= MAX_RECALL_LIMIT:
            raise ArgumentError(f"limit must be between 1 and {MAX_RECALL_LIMIT}, got {limit!r}")
        where = self._talk()
        if where is None:
            return [], []
        asked = parse_query(query, now=now)
        if not asked.groups:
            return [], []
        total, mean = where.corpus()
        found = [where.matching(g.forms, cap=MATCH_CAP, exclude=exclude) for g in asked.groups]
        history = [
            where.history_matching(g.forms, cap=MATCH_CAP, exclude=exclude) for g in asked.groups
        ]
        idf = weights(
            asked,
            [m + h for (m, _), (h, _) in zip(found, history, strict=True)],
            total + max((h for h, _ in history), default=0),
        )
        lines = _remembered(where.lines)  # the ranking's second look and the hits share reads
        ranked = rank_messages(asked, found, idf=idf, mean_chars=mean, lines=lines)
        ranked += rank_history(asked, history, idf=idf)
        ranked.sort(key=lambda r: (r.score, r.time), reverse=True)
        notes = []
        embeddings = Embeddings.from_env()
        if embeddings is not None:
            try:
                near = semantic_ranks(where, embeddings, query, exclude=exclude)
            except ImportError:
                notes.append(
                    "semantic search is off: it needs the 'semantic' extra "
                    "(pip install 'toolnexus[semantic]'); these hits match the words alone"
                )
            except IndexNotKept as exc:
                why = " ".join(str(exc).split())[:160]
                notes.append(
                    f"the semantic index could not be kept ({why}); these hits match the "
                    "words alone"
                )
            except Exception as exc:  # an endpoint down, refusing, or answering nonsense
                why = " ".join(str(exc).split())[:160] or type(exc).__name__
                notes.append(
                    f"semantic search is unavailable ({embeddings.base_url}: {why}); these "
                    "hits match the words alone"
                )
            else:
                ranked = fuse(ranked, near, lines)
        return _hits(lines, asked, ranked, limit), notes

    @_guarded
    def has_any(self) -> bool:
        """Whether there is anything to recall: a saved session or a memory change."""
        where = self._talk()
        return where is not None and where.has_any()

    def _resolve(self, where: Talk | None, id: str) -> str:
        if not isinstance(id, str):
            raise TypeError(f"a session id is a str, got {type(id).__name__}")
        ids = where.match_ids(id.strip()) if where and id.strip() else []
        if len(ids) == 1:
            return ids[0]
        if not ids:
            raise ConversationError(
                f"no saved session {id!r} in {self.dir} (`toolnexus sessions "
                f"{self.dir} list` shows them)",
                kind="not_found",
            )
        raise ConversationError(
            f"{id!r} could be any of {', '.join(ids)}: give more of the id", kind="ambiguous"
        )


def _saved(meta: Meta) -> SavedSession:
    return SavedSession(
        id=meta.id,
        started=meta.started,
        ended=meta.ended,
        model=meta.model,
        soul_digest=meta.soul,
        title=meta.title,
        messages=meta.messages,
        origin=meta.origin,
        usage=Usage(*meta.usage),
    )


Lines = Callable[[Sequence[tuple[str, int]]], Mapping[tuple[str, int], Line]]


def _remembered(fetch: Lines) -> Lines:
    """`fetch` (a store's `lines`), reading each message once however often it is asked."""
    known: dict[tuple[str, int], Line | None] = {}

    def lines(keys: Sequence[tuple[str, int]]) -> Mapping[tuple[str, int], Line]:
        missing = [key for key in dict.fromkeys(keys) if key not in known]
        if missing:
            found = fetch(missing)
            known.update((key, found.get(key)) for key in missing)
        return {key: line for key in keys if (line := known[key]) is not None}

    return lines


def _hits(lines: Lines, asked: RecallQuery, ranked: Sequence[Ranked], limit: int) -> list[Hit]:
    """The best `limit` hits: neighbouring messages of one conversation merged into one
    window, each shown with the turn before and after it."""
    chosen: list[tuple[Ranked, list[int]]] = []  # a hit, and the seqs merged into it
    for r in ranked[: limit * MERGE_LOOK]:
        if r.key is not None:
            session, seq = r.key
            near = next(
                (
                    c
                    for c in chosen
                    if c[0].key is not None
                    and c[0].key[0] == session
                    and min(abs(seq - s) for s in c[1]) <= 2
                ),
                None,
            )
            if near is not None:
                # Next to a hit, or one turn apart: merged into it when it ranks close (and the
                # hit spans at most MERGED_SPAN turns); else shown in its window, or a hit of
                # its own when it is one turn apart.
                gap = min(abs(seq - s) for s in near[1])
                span = max(*near[1], seq) - min(*near[1], seq) + 1
                if span <= MERGED_SPAN and r.score >= MERGE_SCORE * near[0].score:
                    near[1].append(seq)
                    continue
                if gap <= 1:
                    continue
        if len(chosen) == limit:
            continue
        chosen.append((r, [] if r.key is None else [r.key[1]]))
    keys = [
        (c[0].key[0], seq)
        for c in chosen
        if c[0].key is not None
        for seq in range(min(c[1]) - 1, max(c[1]) + 2)
        if seq >= 1
    ]
    shown = lines(keys)
    hits = []
    seen: set[tuple[str, int]] = set()  # turns an earlier hit shows: never shown twice
    for r, seqs in chosen:
        if r.change is not None:
            hits.append(_change_hit(r.change, asked))
            continue
        assert r.key is not None
        session, seq = r.key
        own = shown.get((session, seq))
        if own is None:  # removed meanwhile
            continue
        window = tuple(
            _turn(line, hit=line.seq in seqs)
            for at in range(min(seqs) - 1, max(seqs) + 2)
            if (line := shown.get((session, at))) is not None
            and (at in seqs or (session, at) not in seen)
        )
        seen.update((session, t.seq) for t in window)
        withheld = _withheld(own.text)
        hits.append(
            Hit(
                kind="conversation",
                session=session,
                time=own.time,
                role=own.role,
                snippet="" if withheld else snippet_of(own.text, asked.words),
                withheld=withheld,
                window=window,
                seq=seq,
            )
        )
    return hits


def _withheld(text: str) -> str | None:
    """Why the memory scanner keeps `text` back from a model (None: it does not)."""
    reasons = list(DEFAULT.reasons(text))
    return "; ".join(reason.split(" (", 1)[0] for reason in reasons) or None


def _turn(line: Line, *, hit: bool) -> Turn:
    why = _withheld(line.text)
    text = f"(withheld: the text did not pass the memory scanner: {why})" if why else line.text
    return Turn(line.seq, line.time, line.role, line.name, text, hit)


def _change_hit(found: Found, asked: RecallQuery) -> Hit:
    """A memory change as shown: the snippet, unless the scanner withholds it."""
    withheld = _withheld(found.text)
    return Hit(
        kind="memory",
        session=found.session,
        time=found.time,
        role=found.role,
        snippet="" if withheld else snippet_of(found.text, asked.words),
        change=found.ref,
        withheld=withheld,
    )
