"""A persona's saved conversations in a PostgreSQL store: save as a session goes, import,
list, read, remove, and search them with the memory history (`tsvector`, GIN).

The methods mirror `_transcripts` (the folder's), so `Conversations` reads either
the same way; the rows are the folder's, column for column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from .._records import now
from .._sessions import (
    Found,
    Imported,
    Line,
    Match,
    Meta,
    Record,
    Stored,
    change_found,
    import_each,
    scrub,
    title_of,
)
from ._connection import PgConnection

__all__ = ["PgTalk"]

#: A session's row with its message count and summed usage (FROM toolnexus_sessions s).
_META = (
    "s.id, s.started, s.ended, s.model, s.soul, s.title, s.origin, "
    "(SELECT COUNT(*) FROM toolnexus_messages m WHERE m.key = s.key AND m.session = s.id), "
    + ", ".join(
        f"(SELECT COALESCE(SUM(m.{column}), 0) FROM toolnexus_messages m "
        "WHERE m.key = s.key AND m.session = s.id)"
        for column in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    )
)
_INSERT_MESSAGE = (
    "INSERT INTO toolnexus_messages (key, session, seq, time, role, name, data, text, "
    "is_error, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_WORDY = re.compile(r"\w")


def _key(row: Sequence[Any]) -> tuple[str, int]:
    return (str(row[0]), int(row[1]))


def _speaker(data: str) -> str:
    """The `name` a saved message's chat JSON gives its speaker ('' when none)."""
    try:
        name = json.loads(data).get("name")
    except (ValueError, AttributeError):
        return ""
    return name if isinstance(name, str) else ""


def _tsquery(forms: Sequence[str]) -> tuple[str | None, dict[str, Any]]:
    """A tsquery matching any of `forms` (a word, `prefix*`, or words in order), as SQL with
    its parameters: the words as PostgreSQL reads them, never its syntax."""
    parts: list[str] = []
    params: dict[str, Any] = {}
    for k, form in enumerate(forms):
        text = scrub(form)
        if not _WORDY.search(text):
            continue
        if text.endswith("*") and " " not in text:
            word = re.sub(r"\W+", "", text)
            if not word:
                continue
            params[f"f{k}"] = word
            parts.append(f"to_tsquery('english', quote_literal(%(f{k})s) || ':*')")
        else:
            params[f"f{k}"] = text
            parts.append(f"phraseto_tsquery('english', %(f{k})s)")
    return (" || ".join(parts) or None), params


def _meta(row: Sequence[Any]) -> Meta:
    a, b, c, d = (int(v) for v in row[8:12])
    return Meta(row[0], row[1], row[2], row[3], row[4], row[5], row[6], int(row[7]), (a, b, c, d))


def _rows(key: str, session: str, first: int, time: str, records: Sequence[Record]) -> list[Any]:
    return [
        (
            key,
            session,
            first + i,
            r.time or time,
            r.role,
            r.name,
            scrub(r.data),
            scrub(r.text),
            r.is_error,
            *tuple(r.usage or (None, None, None, None)),
        )
        for i, r in enumerate(records, 1)
    ]


class PgTalk:
    """A persona's saved conversations in PostgreSQL, searched with its memory history."""

    __slots__ = ("db",)

    def __init__(self, db: PgConnection) -> None:
        self.db = db

    def save(
        self,
        *,
        session: str,
        model: str | None,
        soul: str,
        records: Sequence[Record],
        create: bool = True,
    ) -> bool:
        """Append `records` to a live session (as `_transcripts.save` does in a folder);
        False when the session was removed while it ran (and not `create`)."""
        time, title = now(), scrub(title_of(records))
        with self.db.connection() as conn, conn.transaction():
            updated = conn.execute(
                "UPDATE toolnexus_sessions SET ended = %s, model = COALESCE(%s, model), "
                "soul = %s, title = CASE WHEN title = '' THEN %s ELSE title END "
                "WHERE key = %s AND id = %s RETURNING (SELECT COALESCE(MAX(seq), 0) FROM "
                "toolnexus_messages m WHERE m.key = %s AND m.session = %s)",
                (time, model, scrub(soul), title, self.db.key, session, self.db.key, session),
            ).fetchone()
            if updated is None:
                if not create:
                    return False
                conn.execute(
                    "INSERT INTO toolnexus_sessions (key, id, started, ended, model, soul, "
                    "title, origin) VALUES (%s, %s, %s, %s, %s, %s, %s, 'live')",
                    (self.db.key, session, time, time, model, scrub(soul), title),
                )
            last = 0 if updated is None else int(updated[0])
            with conn.cursor() as cur:
                cur.executemany(_INSERT_MESSAGE, _rows(self.db.key, session, last, time, records))
        return True

    def import_conversations(self, batch: Sequence[Imported]) -> list[tuple[str, bool]]:
        """Save imported conversations in one transaction; for each, `(id, new)` (the
        same messages imported before keep the id they got then)."""
        time, key = now(), self.db.key
        with self.db.connection() as conn, conn.transaction(), conn.cursor() as cur:

            def known(digest: str) -> str | None:
                row = conn.execute(
                    "SELECT id FROM toolnexus_sessions WHERE key = %s AND digest = %s",
                    (key, digest),
                ).fetchone()
                return None if row is None else str(row[0])

            def insert(item: Imported) -> None:
                title = scrub(item.title or title_of(item.records))
                times = [r.time for r in item.records if r.time]  # its own, when it has them
                started, ended = (min(times), max(times)) if times else (time, time)
                conn.execute(
                    "INSERT INTO toolnexus_sessions (key, id, started, ended, model, soul, "
                    "title, origin, digest) VALUES (%s, %s, %s, %s, NULL, '', %s, 'import', %s)",
                    (key, item.session, started, ended, title, item.digest),
                )
                cur.executemany(_INSERT_MESSAGE, _rows(key, item.session, 0, time, item.records))

            return import_each(batch, known=known, insert=insert)

    def sessions(self, *, limit: int | None = None) -> list[Meta]:
        """Saved sessions, the most recently started first."""
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT {_META} FROM toolnexus_sessions s WHERE s.key = %s "
                "ORDER BY s.started DESC, s.id DESC LIMIT %s",
                (self.db.key, limit),
            ).fetchall()
        return [_meta(row) for row in rows]

    def latest(self) -> Meta | None:
        """The session whose last message was saved most recently, or None."""
        with self.db.connection() as conn:
            row = conn.execute(
                f"SELECT {_META} FROM toolnexus_sessions s WHERE s.key = %s "
                "ORDER BY s.ended DESC, s.started DESC LIMIT 1",
                (self.db.key,),
            ).fetchone()
        return None if row is None else _meta(row)

    def match_ids(self, prefix: str) -> list[str]:
        """The ids of saved sessions that start with `prefix` (an exact id matches alone)."""
        prefix = scrub(prefix)
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT id FROM toolnexus_sessions WHERE key = %s AND "
                "(id = %s OR left(id, %s) = %s) ORDER BY id <> %s, id LIMIT 10",
                (self.db.key, prefix, len(prefix), prefix, prefix),
            ).fetchall()
        ids = [str(row[0]) for row in rows]
        return ids[:1] if ids and ids[0] == prefix else ids

    def meta(self, session: str) -> Meta | None:
        """One saved session's row, or None."""
        with self.db.connection() as conn:
            row = conn.execute(
                f"SELECT {_META} FROM toolnexus_sessions s WHERE s.key = %s AND s.id = %s",
                (self.db.key, session),
            ).fetchone()
        return None if row is None else _meta(row)

    def messages(self, session: str) -> list[Stored]:
        """A saved session's messages, in order."""
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT seq, time, role, name, data, is_error, input_tokens, output_tokens, "
                "cache_read_tokens, cache_write_tokens FROM toolnexus_messages "
                "WHERE key = %s AND session = %s ORDER BY seq",
                (self.db.key, session),
            ).fetchall()
        return [
            Stored(seq, time, role, name, data, bool(err), None if a is None else (a, b, c, d))
            for seq, time, role, name, data, err, a, b, c, d in rows
        ]

    def remove(self, session: str) -> int:
        """Delete a saved session and its messages for good; how many messages it had."""
        with self.db.connection() as conn, conn.transaction():
            count = conn.execute(
                "DELETE FROM toolnexus_messages WHERE key = %s AND session = %s",
                (self.db.key, session),
            ).rowcount
            conn.execute(
                "DELETE FROM toolnexus_sessions WHERE key = %s AND id = %s", (self.db.key, session)
            )
        return int(count)

    def has_any(self) -> bool:
        """Whether there is anything to recall: a saved session or a memory change."""
        with self.db.connection() as conn:
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM toolnexus_sessions WHERE key = %(k)s) OR "
                "EXISTS (SELECT 1 FROM toolnexus_changes WHERE key = %(k)s)",
                {"k": self.db.key},
            ).fetchone()
        return bool(row and row[0])

    def corpus(self) -> tuple[int, float]:
        """How many messages recall searches, and their mean length in characters."""
        with self.db.connection() as conn:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM toolnexus_messages WHERE key = %(key)s), "
                "(SELECT avg(length(text)) FROM (SELECT text FROM toolnexus_messages "
                "WHERE key = %(key)s AND text <> '' ORDER BY time DESC LIMIT 2000) recent)",
                {"key": self.db.key},
            ).fetchone()
        assert row is not None
        return int(row[0]), float(row[1] or 1.0)

    def matching(
        self, forms: Sequence[str], *, cap: int, exclude: str | None = None
    ) -> tuple[int, list[Match]]:
        """The saved messages holding any of `forms`: how many, and the newest `cap`."""
        query, params = _tsquery(forms)
        if query is None:
            return 0, []
        params |= {"key": self.db.key, "exclude": exclude, "cap": cap}
        where = (
            f"key = %(key)s AND words @@ ({query}) AND session IS DISTINCT FROM %(exclude)s "
            "AND name <> 'recall'"
        )
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT session, seq, time, length(text) FROM toolnexus_messages WHERE {where} "
                "ORDER BY time DESC, seq DESC LIMIT %(cap)s",
                params,
            ).fetchall()
            count = len(rows)
            if count >= cap:
                found = conn.execute(
                    f"SELECT count(*) FROM toolnexus_messages WHERE {where}", params
                ).fetchone()
                count = int(found[0]) if found else count
        return count, [Match(str(s), int(q), str(t), int(n)) for s, q, t, n in rows]

    def history_matching(
        self, forms: Sequence[str], *, cap: int, exclude: str | None = None
    ) -> tuple[int, list[Found]]:
        """The memory changes holding any of `forms`: how many, and the newest `cap`."""
        query, params = _tsquery(forms)
        if query is None:
            return 0, []
        params |= {"key": self.db.key, "exclude": exclude, "cap": cap}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT id, source, time, target, action, "
                "coalesce(before, '') || chr(10) || coalesce(after, '') FROM toolnexus_changes "
                f"WHERE key = %(key)s AND words @@ ({query}) AND (%(exclude)s::text IS NULL OR "
                "strpos(source || ' ', 'session=' || %(exclude)s || ' ') = 0) "
                "ORDER BY id DESC LIMIT %(cap)s",
                params,
            ).fetchall()
        found = [change_found(row) for row in rows]
        return len(found), found

    def unembedded(self, model: str, *, limit: int) -> list[tuple[tuple[str, int], str]]:
        """The newest `limit` messages recall searches with no embedding by `model` yet."""
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT m.session, m.seq, m.text FROM toolnexus_messages m WHERE m.key = %s "
                "AND m.text <> '' AND m.name <> 'recall' AND NOT EXISTS (SELECT 1 FROM "
                "toolnexus_vectors v WHERE v.key = m.key AND v.session = m.session AND "
                "v.seq = m.seq AND v.model = %s) ORDER BY m.time DESC, m.seq DESC LIMIT %s",
                (self.db.key, model, limit),
            ).fetchall()
        return [(_key(row), str(row[2])) for row in rows]

    def put_vectors(self, model: str, items: Sequence[tuple[tuple[str, int], bytes]]) -> None:
        """Keep each message's embedding by `model` (a message gone meanwhile is skipped)."""
        with self.db.connection() as conn, conn.transaction():
            for (session, seq), vector in items:
                conn.execute(
                    "INSERT INTO toolnexus_vectors (key, session, seq, model, vector) "
                    "SELECT key, session, seq, %s, %s FROM toolnexus_messages "
                    "WHERE key = %s AND session = %s AND seq = %s "
                    "ON CONFLICT (key, session, seq, model) DO UPDATE SET vector = EXCLUDED.vector",
                    (model, vector, self.db.key, session, seq),
                )

    def vectors(self, model: str) -> list[tuple[tuple[str, int], bytes]]:
        """Every embedding by `model`, with its message's place."""
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT session, seq, vector FROM toolnexus_vectors WHERE key = %s AND model = %s",
                (self.db.key, model),
            ).fetchall()
        return [(_key(row), bytes(row[2])) for row in rows]

    def lines(self, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Line]:
        """The saved messages at `keys` (session, seq) that exist, by key."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT m.session, m.seq, m.time, m.role, m.data, "
                "m.text FROM toolnexus_messages m JOIN unnest(%(sessions)s::text[], "
                "%(seqs)s::bigint[]) AS k(session, seq) ON m.session = k.session AND "
                "m.seq = k.seq WHERE m.key = %(key)s AND m.name <> 'recall'",
                {
                    "key": self.db.key,
                    "sessions": [s for s, _ in wanted],
                    "seqs": [q for _, q in wanted],
                },
            ).fetchall()
        # The speaker's name is read here: the chat JSON may hold a NUL (`\u0000`), which
        # PostgreSQL's jsonb refuses.
        return {
            (str(s), int(q)): Line(str(s), int(q), str(t), str(r), _speaker(str(d)), str(x))
            for s, q, t, r, d, x in rows
        }

    def sessions_holding(self, texts: Sequence[str]) -> list[str]:
        """The ids of saved sessions with a message that contains one of `texts` (any case)."""
        found: set[str] = set()
        with self.db.connection() as conn:
            for text in map(scrub, texts):
                if not text.strip():
                    continue
                rows = conn.execute(
                    "SELECT DISTINCT session, text FROM toolnexus_messages "
                    "WHERE key = %s AND strpos(lower(text), lower(%s)) > 0",
                    (self.db.key, text),
                ).fetchall()
                found.update(str(s) for s, body in rows if text.casefold() in body.casefold())
        return sorted(found)
