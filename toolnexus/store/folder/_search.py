"""Full-text search over saved conversations and the memory history (recall).

Two FTS5 indexes, kept by triggers in the same database: one over saved
messages, one over memory changes; each query runs on both and the hits are
merged by bm25 rank. What a person or a model types is never search syntax:
each chunk becomes a quoted phrase.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from .._sessions import SNIPPET_TOKENS, Found, scrub
from ._state import BUSY_MS, State

__all__ = ["Found", "fts_queries", "index_history", "search", "sessions_holding"]

#: A query matching more messages than this ranks the newest this many of them: a word
#: in every other message would otherwise cost a score for each (seconds at a million).
RANKED_MATCHES = 2_000
#: At most this many query terms are searched (the rest are ignored).
MAX_TERMS = 32


_WORDY = re.compile(r"\w")
_WORDS = re.compile(r"\w+")
#: Words too common to search for when the query has others ("what is the codename").
_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
_SESSION_IN_SOURCE = re.compile(r"\bsession=(\S+)")


def fts_queries(text: str) -> tuple[str, str] | None:
    """FTS5 queries for what a person typed: all the words, then any of them.

    Each whitespace-separated chunk becomes a quoted phrase, so nothing the user
    types is FTS syntax (`NEAR`, `-`, `(`, `:` are words or nothing); a chunk
    ending in `*` is a prefix term. None when the text has no word at all.
    """
    terms: list[str] = []
    common: set[str] = set()
    for chunk in scrub(text).replace("\x00", " ").split():  # SQLite ends a query at a NUL
        words = _WORDS.findall(chunk.lower())
        if not words:
            continue
        # A prefix needs two letters: `w*` would rank nearly every message.
        prefix = chunk.endswith("*") and len(chunk.rstrip("*").lstrip("\"'(")) >= 2
        term = '"' + chunk.replace('"', '""') + '"' + ("*" if prefix else "")
        if term not in terms:
            terms.append(term)
        if not prefix and all(w in _STOPWORDS or len(w) == 1 for w in words):
            common.add(term)
    if len(common) < len(terms):  # search the telling words; all of them if none is
        terms = [term for term in terms if term not in common]
    terms = terms[:MAX_TERMS]
    if not terms:
        return None
    return " ".join(terms), " OR ".join(terms)


def index_history(state: State) -> bool:
    """Put the memory changes recorded since the last search in the search index.

    A memory write does not index its change (it stays at the disk's pace); the
    first search after it does, in one transaction. False when that cannot be
    done now (a database this process may not write, or one another writer holds
    for longer than `INDEX_WAIT_MS`): `search` then reads those changes unindexed.
    """
    with state.reading() as conn:
        behind = conn.execute(
            "SELECT (SELECT COALESCE(MAX(id), 0) FROM memory_changes) > upto "
            "FROM memory_changes_indexed"
        ).fetchone()[0]
        if not behind:
            return True
        conn.execute(f"PRAGMA busy_timeout = {INDEX_WAIT_MS}")  # never hold a search up
        try:
            with state.transaction() as conn:
                conn.execute(f"INSERT INTO memory_changes_fts (rowid, before, after) {_UNINDEXED}")
                conn.execute(
                    "UPDATE memory_changes_indexed SET upto = "
                    "(SELECT COALESCE(MAX(id), 0) FROM memory_changes)"
                )
        except sqlite3.OperationalError as exc:
            if not any(word in str(exc) for word in ("readonly", "locked", "busy")):
                raise
            return False
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    return True


#: The changes not in the index yet, as the index holds them.
_UNINDEXED = (
    "SELECT id, CASE WHEN shape = 'file' THEN NULL ELSE before END, after "
    "FROM memory_changes WHERE id > (SELECT upto FROM memory_changes_indexed)"
)
#: How long indexing the history waits for another writer before searching without it.
INDEX_WAIT_MS = 200


def search(state: State, query: str, *, limit: int, exclude: str | None = None) -> list[Found]:
    """The best `limit` hits for FTS5 `query` among saved messages (leaving out the
    session `exclude`) and the memory history, best first."""
    indexed = index_history(state)
    with state.reading() as conn:
        rows = conn.execute(
            "SELECT m.id, m.session, m.time, m.role, m.text, "
            f"snippet(messages_fts, 0, '', '', '…', {SNIPPET_TOKENS}), messages_fts.rank "
            "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
            "WHERE messages_fts MATCH :query AND m.session IS NOT :exclude AND m.name != 'recall' "
            "AND messages_fts.rowid >= COALESCE((SELECT rowid FROM messages_fts "
            "WHERE messages_fts MATCH :query ORDER BY rowid DESC LIMIT 1 OFFSET :ranked), 0) "
            "ORDER BY messages_fts.rank LIMIT :limit",
            {"query": query, "exclude": exclude, "ranked": RANKED_MATCHES, "limit": limit},
        ).fetchall()
        found = [
            Found("message", ref, session, time, role, snippet, text, rank)
            for ref, session, time, role, text, snippet, rank in rows
        ]
        tables = ["memory_changes_fts"]
        if not indexed:  # the changes not indexed yet, in an index of this connection only
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.pending_changes USING fts5("
                "before, after, tokenize='porter unicode61 remove_diacritics 2')"
            )
            conn.execute("DELETE FROM temp.pending_changes")
            conn.execute(f"INSERT INTO temp.pending_changes (rowid, before, after) {_UNINDEXED}")
            tables.append("pending_changes")
        rows = []
        for table in tables:
            rows += conn.execute(
                "SELECT c.id, c.source, c.time, c.target, c.action, "
                "COALESCE(c.before, '') || char(10) || COALESCE(c.after, ''), "
                f"snippet({table}, -1, '', '', '…', {SNIPPET_TOKENS}), {table}.rank "
                f"FROM {table} JOIN memory_changes c ON c.id = {table}.rowid "
                f"WHERE {table} MATCH :query "
                # a change made in the conversation asking is in that conversation already
                "AND (:exclude IS NULL "
                "OR instr(c.source || ' ', 'session=' || :exclude || ' ') = 0) "
                f"ORDER BY {table}.rank LIMIT :limit",
                {"query": query, "exclude": exclude, "limit": limit},
            ).fetchall()
    for ref, source, time, target, action, text, snippet, rank in rows:
        mark = _SESSION_IN_SOURCE.search(source)
        role = f"memory {target} {action}"
        found.append(
            Found("memory", ref, mark.group(1) if mark else None, time, role, snippet, text, rank)
        )
    found.sort(key=lambda f: f.time, reverse=True)  # equal ranks: the newest first
    found.sort(key=lambda f: f.rank)  # bm25: lower is better
    return found[:limit]


def sessions_holding(state: State, texts: Sequence[str]) -> list[str]:
    """The ids of saved sessions with a message that contains one of `texts` (any case)."""
    found: set[str] = set()
    with state.reading() as conn:
        for text in map(scrub, texts):
            if not _WORDY.search(text):
                continue
            phrase = '"' + text.replace('"', '""') + '"'
            rows = conn.execute(
                "SELECT m.session, m.text FROM messages_fts "
                "JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?",
                (phrase,),
            )
            found.update(str(s) for s, body in rows if text.casefold() in body.casefold())
    return sorted(found)
