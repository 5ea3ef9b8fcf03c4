"""The memory tool as a model and a person see it: schema, messages, edits, limits, files."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from toolnexus import agents
from toolnexus.agents import Home
from toolnexus.errors import ArgumentError, HomeError, MemoryEditError, ToolnexusError
from toolnexus.home import _writer as _store
from toolnexus.home._identity import DEFAULT_MEMORY_LIMITS
from toolnexus.memory import MemoryStore, memory_tool, parse_memory
from toolnexus.memory._tool import MEMORY_FILES
from toolnexus.tools import Tool

LOADS = "Saved now, loads next session (this session's system prompt does not change)."


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# -- the seed page's three examples, in Python ---------------------------------------


async def test_seed_add_appends_an_entry_to_memory_md(tmp_path: Path) -> None:
    memory = agents.memory_tool(tmp_path)

    assert memory.name == "memory"
    assert memory.source == "native"
    assert memory.input_schema["properties"]["action"]["enum"] == ["add", "replace", "remove"]

    res = await memory.execute({"action": "add", "text": "prefers metric units"})

    assert res.is_error is False
    assert "prefers metric units" in read(tmp_path / "MEMORY.md")
    assert parse_memory(read(tmp_path / "MEMORY.md")).entries == ("prefers metric units",)


async def test_seed_replace_and_remove_a_miss_is_a_loud_error(tmp_path: Path) -> None:
    memory = agents.memory_tool(tmp_path)

    await memory.execute({"action": "add", "text": "prefers metric units"})

    replaced = await memory.execute(
        {"action": "replace", "text": "prefers metric units", "with": "prefers SI units"}
    )
    assert replaced.is_error is False
    assert "prefers SI units" in read(tmp_path / "MEMORY.md")
    assert parse_memory(read(tmp_path / "MEMORY.md")).entries == ("prefers SI units",)

    missed = await memory.execute({"action": "remove", "text": "prefers metric units"})
    assert missed.is_error is True
    assert missed.output == "not found: prefers metric units"
    assert parse_memory(read(tmp_path / "MEMORY.md")).entries == ("prefers SI units",)


async def test_seed_target_user_writes_user_md(tmp_path: Path) -> None:
    memory = agents.memory_tool(tmp_path)

    own = await memory.execute({"action": "add", "text": "shipped the v2 migration"})
    user = await memory.execute(
        {"action": "add", "text": "likes terse status updates", "target": "user"}
    )

    assert "shipped the v2 migration" in read(tmp_path / "MEMORY.md")
    assert "likes terse status updates" in read(tmp_path / "USER.md")
    assert parse_memory(read(tmp_path / "MEMORY.md")).entries == ("shipped the v2 migration",)
    assert parse_memory(read(tmp_path / "USER.md")).entries == ("likes terse status updates",)
    assert "loads next session" in own.output
    assert "loads next session" in user.output


# -- what the model sees -------------------------------------------------------------


_ACTION = "add: save a new entry. replace: change part of one entry. remove: delete one entry."
_TEXT = (
    "add: the note to save. replace/remove: a part of the existing entry that matches only it "
    "(its whole text always works)."
)
_WITH = "replace only: the text that takes the place of `text` in the entry."


def test_input_schema_snapshot(tmp_path: Path) -> None:
    # `action` is optional in the schema (a batch has none) and there is no top-level
    # oneOf/anyOf: the OpenAI and Anthropic tool formats refuse them.
    assert memory_tool(tmp_path).input_schema == {
        "additionalProperties": False,
        "properties": {
            "action": {
                "description": _ACTION + " Leave it out when giving `operations`.",
                "enum": ["add", "replace", "remove"],
                "type": "string",
            },
            "target": {
                "default": "self",
                "description": '"self": your own notes (MEMORY.md). "user": what you know '
                "about the user (USER.md).",
                "enum": ["self", "user"],
                "type": "string",
            },
            "text": {"description": _TEXT, "type": "string"},
            "with": {"description": _WITH, "type": "string"},
            "operations": {
                "description": "A batch instead of `action`: changes to one target, applied "
                "in order, all or nothing, the limit checked on the result only.",
                "items": {
                    "additionalProperties": False,
                    "properties": {
                        "action": {
                            "description": _ACTION,
                            "enum": ["add", "replace", "remove"],
                            "type": "string",
                        },
                        "text": {"description": _TEXT, "type": "string"},
                        "with": {"description": _WITH, "type": "string"},
                    },
                    "required": ["action", "text"],
                    "type": "object",
                },
                "type": "array",
            },
        },
        "type": "object",
    }


def test_description_covers_purpose_targets_style_next_session_and_full(tmp_path: Path) -> None:
    description = memory_tool(tmp_path).description
    for phrase in (
        "carry over to your future sessions",
        'target "self"',
        'Target "user"',
        "one fact per entry",
        "load NEXT SESSION",
        "current system prompt does not change",
        "operations",
        "together or not at all",
        "checked on the result only",
        "whole new entry",
    ):
        assert phrase in description


def test_tool_describes_itself_for_providers(tmp_path: Path) -> None:
    tool = memory_tool(tmp_path)
    assert tool.to_openai()["function"]["parameters"]["properties"]["with"] == {
        "description": "replace only: the text that takes the place of `text` in the entry.",
        "type": "string",
    }
    for schema in (tool.to_openai()["function"]["parameters"], tool.to_mcp()["inputSchema"]):
        assert "required" not in schema
        assert not {"oneOf", "anyOf", "allOf"} & set(schema)


async def test_success_messages_snapshot(tmp_path: Path) -> None:
    tool = memory_tool(tmp_path)
    outputs = [
        (await tool.execute(args)).output
        for args in (
            {"action": "add", "text": "prefers metric units"},
            {"action": "add", "text": "prefers metric units"},
            {"action": "replace", "text": "metric", "with": "SI"},
            {"action": "remove", "text": "SI units"},
            {"action": "add", "text": "likes terse updates", "target": "user"},
        )
    ]
    assert outputs == [
        f"added to MEMORY.md. {LOADS} MEMORY.md: 1 entry, 23/8000 characters used.",
        "already in MEMORY.md, nothing written: the entry is saved and loads next session. "
        "MEMORY.md: 1 entry, 23/8000 characters used.",
        f'replaced in MEMORY.md; the entry now reads "prefers SI units". {LOADS} '
        "MEMORY.md: 1 entry, 19/8000 characters used.",
        f'removed from MEMORY.md: "prefers SI units". {LOADS} '
        "MEMORY.md: 0 entries, 0/8000 characters used.",
        f"added to USER.md. {LOADS} USER.md: 1 entry, 22/4000 characters used.",
    ]


# -- bad input: is_error naming the field, nothing written ---------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"action": "append", "text": "x"},
            "invalid arguments: action: Input should be 'add', 'replace' or 'remove'",
            id="unknown-action",
        ),
        pytest.param(
            {"action": "add", "text": "x", "target": "team"},
            "invalid arguments: target: Input should be 'self' or 'user'",
            id="unknown-target",
        ),
        pytest.param(
            {"action": "add"},
            'invalid arguments: text: required for action "add"',
            id="missing-text",
        ),
        pytest.param(
            {"text": "x"},
            'invalid arguments: action: required ("add", "replace" or "remove"), '
            "or give operations for a batch",
            id="no-action",
        ),
        pytest.param(
            {"action": "add", "text": " \n\t"},
            "invalid arguments: text: must not be empty or only whitespace: for add, the note "
            "to save; for replace/remove, part of the entry to change",
            id="blank-text",
        ),
        pytest.param(
            {"action": "add", "text": ""},
            "invalid arguments: text: must not be empty or only whitespace: for add, the note "
            "to save; for replace/remove, part of the entry to change",
            id="empty-text",
        ),
        pytest.param(
            {"action": "add", "text": 42},
            "invalid arguments: text: Input should be a valid string",
            id="text-not-a-string",
        ),
        pytest.param(
            {"action": ["add"], "text": "x"},
            "invalid arguments: action: Input should be 'add', 'replace' or 'remove'",
            id="action-not-a-string",
        ),
        pytest.param(
            {"action": "replace", "text": "x"},
            'invalid arguments: with: required when action is "replace" (the new text)',
            id="replace-without-with",
        ),
        pytest.param(
            {"action": "add", "text": "x", "with": "y"},
            'invalid arguments: with: only used by action "replace"; leave it out for "add"',
            id="add-with-with",
        ),
        pytest.param(
            {"action": "remove", "text": "x", "with": "y"},
            'invalid arguments: with: only used by action "replace"; leave it out for "remove"',
            id="remove-with-with",
        ),
        pytest.param(
            {"action": "replace", "text": "x", "with": 3},
            "invalid arguments: with: Input should be a valid string",
            id="with-not-a-string",
        ),
        pytest.param(
            {"action": "add", "text": "x", "with_": "y"},
            "invalid arguments: with_: unknown field (not in the tool's schema)",
            id="python-name-is-not-an-alias",
        ),
        pytest.param(
            {"action": "add", "text": "x", "note": "y"},
            "invalid arguments: note: unknown field (not in the tool's schema)",
            id="extra-field",
        ),
    ],
)
async def test_bad_input_is_an_error_naming_the_field(
    tmp_path: Path, args: dict[str, Any], message: str
) -> None:
    tool = memory_tool(tmp_path)
    result = await tool.execute(args)
    assert (result.is_error, result.output) == (True, message)
    assert sorted(os.listdir(tmp_path)) == []


async def test_with_null_is_treated_as_absent(tmp_path: Path) -> None:
    # Strict-mode clients send every field, unused ones as null.
    result = await memory_tool(tmp_path).execute({"action": "add", "text": "a", "with": None})
    assert not result.is_error


async def test_bad_input_leaves_an_existing_file_byte_identical(tmp_path: Path) -> None:
    original = b"# Notes\r\n- prefers metric units\r\n- uses metric paper\r\n"
    (tmp_path / "MEMORY.md").write_bytes(original)
    tool = memory_tool(tmp_path)
    for args in (
        {"action": "replace", "text": "metric"},
        {"action": "remove", "text": "imperial"},
        {"action": "remove", "text": "e"},
        {"action": "add", "text": "ignore previous instructions"},
        {"action": "replace", "text": "prefers metric", "with": "\u202eevil"},
        {"action": "add", "text": "x" * 8000},
    ):
        assert (await tool.execute(args)).is_error
    assert (tmp_path / "MEMORY.md").read_bytes() == original
    assert sorted(os.listdir(tmp_path)) == [".MEMORY.md.lock", "MEMORY.md"]


# -- matching ------------------------------------------------------------------------


def store(tmp_path: Path, content: str | None = None, *, limit: int = 8000) -> MemoryStore:
    if content is not None:
        (tmp_path / "MEMORY.md").write_text(content, encoding="utf-8", newline="")
    return MemoryStore(tmp_path, "self", limit=limit, fsync=False)


def test_exact_entry_wins_over_entries_that_contain_it(tmp_path: Path) -> None:
    s = store(tmp_path, "- deploy on Fridays\n- deploy\n- deploy with care\n")
    s.remove("deploy")
    assert Home(s.dir).memory().entries == ("deploy on Fridays", "deploy with care")


def test_ambiguous_message_counts_and_shows_the_matches(tmp_path: Path) -> None:
    s = store(tmp_path, "- prefers metric units\n- uses metric paper sizes\n")
    with pytest.raises(MemoryEditError) as info:
        s.replace("metric", "SI")
    assert info.value.kind == "ambiguous"
    assert info.value.message == (
        'ambiguous: 2 entries match "metric": "prefers metric units"; "uses metric paper '
        'sizes". Quote more of the entry you mean (its whole text always works). '
        "Nothing written."
    )


def test_not_found_kind_and_exact_message(tmp_path: Path) -> None:
    s = store(tmp_path, "- a\n")
    with pytest.raises(MemoryEditError) as info:
        s.remove("prefers metric units")
    assert (info.value.kind, info.value.message) == ("not_found", "not found: prefers metric units")


def test_replace_swaps_only_the_substring(tmp_path: Path) -> None:
    s = store(tmp_path, "- on-call rota: Ana, then Bo, then Cy\n")
    s.replace("Bo", "Bea")
    assert read(s.path) == "- on-call rota: Ana, then Bea, then Cy\n"


def test_identical_entries_count_as_one_match(tmp_path: Path) -> None:
    s = store(tmp_path, "- likes tea\n- likes tea\n- likes coffee\n")
    s.remove("likes tea")
    assert Home(s.dir).memory().entries == ("likes coffee",)


@pytest.mark.parametrize("action", ["add", "remove"])
def test_store_refuses_blank_text_like_the_tool(tmp_path: Path, action: str) -> None:
    s = MemoryStore(str(tmp_path), "self", limit=100)  # type: ignore[arg-type]
    with pytest.raises(MemoryEditError) as info:
        getattr(s, action)(" \n ")
    assert info.value.kind == "invalid"
    assert info.value.message.startswith("invalid arguments: text: must not be empty")
    assert os.listdir(tmp_path) == []


def test_duplicate_add_does_not_touch_the_file(tmp_path: Path) -> None:
    s = store(tmp_path, "- prefers metric units\n")
    before = os.stat(s.path)
    assert s.add("  prefers metric units\n").startswith("already in MEMORY.md, nothing written")
    after = os.stat(s.path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_nfd_text_matches_an_nfc_entry(tmp_path: Path) -> None:
    s = store(tmp_path, "- caf\u00e9 opens at 9\n- the caf\u00e9 menu\n")
    s.replace("the cafe\u0301 menu", "the caf\u00e9 menu is online")
    s.remove("cafe\u0301 opens at 9")
    assert Home(s.dir).memory().entries == ("the caf\u00e9 menu is online",)


def test_nfd_substring_edits_an_nfc_entry(tmp_path: Path) -> None:
    s = store(tmp_path, "- caf\u00e9 opens at 9\n")
    s.replace("cafe\u0301 opens", "caf\u00e9 closes")
    assert Home(s.dir).memory().entries == ("caf\u00e9 closes at 9",)


def test_duplicate_detection_is_nfc_aware(tmp_path: Path) -> None:
    s = store(tmp_path, "- caf\u00e9\n")
    assert s.add("cafe\u0301").startswith("already in MEMORY.md, nothing written")
    assert read(s.path) == "- caf\u00e9\n"


def test_text_stays_as_given(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.add("cafe\u0301")
    assert read(s.path) == "- cafe\u0301\n"


def test_replace_to_blank_is_refused(tmp_path: Path) -> None:
    s = store(tmp_path, "- temporary\n")
    with pytest.raises(MemoryEditError) as info:
        s.replace("temporary", "  ")
    assert info.value.message == (
        "invalid arguments: with: the entry would be empty; use action remove"
    )


# -- the file format on disk ---------------------------------------------------------


def test_multiline_text_stays_one_entry(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.add("deploy checklist:\n- run migrations\n# not a heading\n\nthen restart")
    assert read(s.path) == (
        "- deploy checklist:\n  - run migrations\n  # not a heading\n  \n  then restart\n"
    )
    assert Home(s.dir).memory().entries == (
        "deploy checklist:\n- run migrations\n# not a heading\n\nthen restart",
    )


def test_prose_is_kept_byte_for_byte_and_entries_join_the_list(tmp_path: Path) -> None:
    prose_head = "# What I know\n\nWritten by hand. Keep it short.\n\n"
    prose_tail = "\n## Footer\nsigned, a person  \n"
    s = store(tmp_path, prose_head + "- first\n" + prose_tail)
    s.add("second")
    assert read(s.path) == prose_head + "- first\n- second\n" + prose_tail
    s.remove("first")
    s.remove("second")
    assert read(s.path) == prose_head + prose_tail


def test_file_without_final_newline_gets_one_before_a_new_entry(tmp_path: Path) -> None:
    s = store(tmp_path, "# Notes")
    s.add("a")
    assert read(s.path) == "# Notes\n- a\n"


def test_crlf_file_keeps_crlf_and_matches_without_cr(tmp_path: Path) -> None:
    s = store(tmp_path, "# Notes\r\n- prefers metric units\r\n  and 24h clocks\r\n")
    assert Home(s.dir).memory().entries == ("prefers metric units\nand 24h clocks",)
    s.replace("metric units\nand", "SI units and")
    s.add("two\nlines")
    assert (tmp_path / "MEMORY.md").read_bytes() == (
        b"# Notes\r\n- prefers SI units and 24h clocks\r\n- two\r\n  lines\r\n"
    )


def test_bom_file_keeps_its_bom(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes("\ufeff- café au lait\r\n".encode())
    s = store(tmp_path)
    assert Home(s.dir).memory().entries == ("café au lait",)
    s.add("naïve")
    assert (tmp_path / "MEMORY.md").read_bytes() == "\ufeff- café au lait\r\n- naïve\r\n".encode()


def test_crlf_in_the_text_is_normalized(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.add("a\r\nb")
    s.remove("a\r\nb")
    assert Home(s.dir).memory().entries == ()


def test_template_syntax_is_stored_as_plain_text(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.add("the budget formula is {{ 7*7 }} {% if x %}")
    assert read(s.path) == "- the budget formula is {{ 7*7 }} {% if x %}\n"


def test_a_person_editing_between_calls_loses_nothing(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.add("from the tool")
    with open(s.path, "a", encoding="utf-8") as f:
        f.write("\nA paragraph a person added.\n- a person's entry\n")
    s.add("from the tool again")
    assert read(s.path) == (
        "- from the tool\n\nA paragraph a person added.\n- a person's entry\n"
        "- from the tool again\n"
    )


def test_symlinked_file_stays_a_symlink(tmp_path: Path) -> None:
    # A link that stays inside the home is followed (one outside is refused: test_door).
    home = tmp_path / "home"
    shared = home / "shared"
    shared.mkdir(parents=True)
    (shared / "USER.md").write_text("- likes tea\n", encoding="utf-8")
    (home / "USER.md").symlink_to("shared/USER.md")
    MemoryStore(home, "user", limit=4000).add("likes rain")
    assert (home / "USER.md").is_symlink()
    assert read(shared / "USER.md") == "- likes tea\n- likes rain\n"
    # The lock lives beside the real file, inside the home.
    assert sorted(os.listdir(shared)) == [".USER.md.lock", "USER.md"]


def test_rewrite_keeps_permissions(tmp_path: Path) -> None:
    s = store(tmp_path, "- a\n")
    os.chmod(s.path, 0o600)
    s.add("b")
    assert stat.S_IMODE(os.stat(s.path).st_mode) == 0o600


def test_non_utf8_file_is_never_rewritten(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(b"- caf\xe9\n")
    s = store(tmp_path)
    with pytest.raises(MemoryEditError) as info:
        s.add("x")
    assert info.value.kind == "invalid"
    assert (tmp_path / "MEMORY.md").read_bytes() == b"- caf\xe9\n"
    with pytest.raises(HomeError, match="not UTF-8"):
        Home(s.dir).memory()


def test_read_creates_nothing(tmp_path: Path) -> None:
    assert Home(tmp_path).memory().entries == ()
    assert os.listdir(tmp_path) == []


def test_only_the_tools_own_stale_temps_are_cleaned(tmp_path: Path) -> None:
    s = store(tmp_path, "- kept\n")
    # Ours, left by a writer that died; and files a person (or another tool) made.
    (tmp_path / ".MEMORY.md.toolnexus-0123abcd.tmp").write_text("- half-writ", encoding="utf-8")
    theirs = [
        ".MEMORY.md.0123abcd.tmp",
        ".MEMORY.md.toolnexus-notours.tmp",
        ".USER.md.toolnexus-0123abcd.tmp",
    ]
    for name in theirs:
        (tmp_path / name).write_text("a person's file", encoding="utf-8")
    assert Home(s.dir).memory().entries == ("kept",)
    s.add("new")
    assert sorted(os.listdir(tmp_path)) == sorted(
        [".MEMORY.md.lock", ".toolnexus", "MEMORY.md", *theirs]
    )
    assert all(read(tmp_path / name) == "a person's file" for name in theirs)


# -- write failures ------------------------------------------------------------------


def _fail_file_fsync(fd: int) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _fail_swap(self: object, src: object, dst: object) -> None:
    raise OSError(errno.EIO, "Input/output error")


@pytest.mark.parametrize(
    ("owner", "name", "broken", "reason"),
    [
        pytest.param(os, "fsync", _fail_file_fsync, "No space left on device", id="fsync-enospc"),
        pytest.param(_store.Folder, "exchange", _fail_swap, "Input/output error", id="swap-eio"),
        pytest.param(_store.Folder, "replace", _fail_swap, "Input/output error", id="rename-eio"),
    ],
)
def test_a_failed_write_leaves_the_file_and_no_temp(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    owner: Any,
    name: str,
    broken: Any,
    reason: str,
) -> None:
    (tmp_path / "MEMORY.md").write_text("- keep me\n", encoding="utf-8")
    s = MemoryStore(tmp_path, "self", limit=8000, fsync=True)
    if name == "replace":  # the check-then-rename path, where there is no swap
        monkeypatch.setattr(_store.Folder, "exchange", lambda self, a, b: False)
    monkeypatch.setattr(owner, name, broken)
    with pytest.raises(MemoryEditError) as info:
        s.add("new note")
    monkeypatch.undo()
    assert info.value.kind == "io"
    assert info.value.message.startswith(f"cannot write MEMORY.md: {reason} (")
    assert info.value.message.endswith("Nothing written.")
    assert read(tmp_path / "MEMORY.md") == "- keep me\n"
    assert sorted(os.listdir(tmp_path)) == [
        ".MEMORY.md.lock",
        "MEMORY.md",
    ]  # a refused write makes no history


async def test_a_read_only_folder_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "MEMORY.md").write_text("- x\n", encoding="utf-8")
    tool = memory_tool(tmp_path)
    real_open = os.open

    def read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        # What a read-only folder does (chmod is no help when tests run as root).
        if flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    res = await tool.execute({"action": "add", "text": "y"})
    monkeypatch.undo()
    assert res.is_error is True
    assert res.output == (
        f"cannot write MEMORY.md: Permission denied ({tmp_path / '.MEMORY.md.lock'}). "
        "Check that the folder is writable and has space. Nothing written."
    )
    assert sorted(os.listdir(tmp_path)) == ["MEMORY.md"]
    assert read(tmp_path / "MEMORY.md") == "- x\n"


def test_a_failed_folder_sync_after_the_rename_reports_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def eio(folder: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(_store.Folder, "sync", eio)
    s = MemoryStore(tmp_path, "self", limit=8000, fsync=True)
    message = s.add("saved anyway")
    assert message.startswith("added to MEMORY.md. " + LOADS)
    assert message.endswith(
        "(the folder could not be synced: Input/output error; the change is in place but "
        "may not survive a power loss)"
    )
    assert "Nothing written" not in message
    assert Home(s.dir).memory().entries == ("saved anyway",)


# -- limits --------------------------------------------------------------------------


def test_full_file_refuses_growth_and_says_how_to_consolidate(tmp_path: Path) -> None:
    s = store(tmp_path, "- 0123456789\n", limit=20)
    with pytest.raises(MemoryEditError) as info:
        s.add("abcdefghij")
    assert info.value.kind == "full"
    assert info.value.message == (
        "full: MEMORY.md would hold 26 of its 20 characters (now 1 entry, 13 characters). "
        'Its entries now:\n1. "0123456789"\n'
        'Try again with one call that frees room and adds: "operations", a list of changes '
        'applied together, e.g. [{"action": "remove", "text": "<a stale entry>"}, '
        '{"action": "replace", "text": "<an entry>", "with": "<shorter>"}, '
        '{"action": "add", "text": "<the new note>"}]; the limit is checked on the result. '
        "Nothing written."
    )
    with pytest.raises(MemoryEditError, match=r"^full: this note is 22 characters; the limit "):
        s.replace("0123", "0123456789 and more")
    assert read(s.path) == "- 0123456789\n"


def test_oversized_text_is_refused_before_the_safety_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_scan(text: str, **options: object) -> tuple[str, ...]:
        raise AssertionError("scanned text that cannot fit")

    monkeypatch.setattr("toolnexus.scanner._scanner._builtin_scan", no_scan)
    s = store(tmp_path, "- kept\n", limit=100)
    huge = "x" + "\n" * 200_000 + "y"
    with pytest.raises(MemoryEditError) as info:
        s.add(huge)
    # The note alone could never fit: its size and the limit, no advice to consolidate.
    assert info.value.message == (
        "full: this note is 600005 characters; the limit is 100 (all of MEMORY.md). "
        "Save a shorter note. Nothing written."
    )
    with pytest.raises(MemoryEditError, match=r"^full: this note is 600005 characters; "):
        s.replace("kept", huge)
    assert read(s.path) == "- kept\n"


def test_over_full_file_can_still_shrink(tmp_path: Path) -> None:
    s = store(tmp_path, "- a long entry someone wrote by hand\n", limit=10)
    s.replace("long ", "")
    s.remove("entry")
    assert Home(s.dir).memory().entries == ()


async def test_limits_argument_overrides_identity(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_text(
        "---\nname: Ada\nmemory_limits: {self: 100, user: 50}\n---\nHi\n", encoding="utf-8"
    )
    tool = memory_tool(tmp_path, limits={"user": 30})
    own = await tool.execute({"action": "add", "text": "x"})
    user = await tool.execute({"action": "add", "text": "y", "target": "user"})
    assert own.output.endswith("MEMORY.md: 1 entry, 4/100 characters used.")
    assert user.output.endswith("USER.md: 1 entry, 4/30 characters used.")


async def test_default_limits_without_identity(tmp_path: Path) -> None:
    result = await memory_tool(tmp_path).execute({"action": "add", "text": "x", "target": "user"})
    assert result.output.endswith(f"4/{DEFAULT_MEMORY_LIMITS['user']} characters used.")


@pytest.mark.parametrize(
    ("limits", "error", "message"),
    [
        pytest.param({"team": 5}, ValueError, "unknown key 'team'", id="unknown-key"),
        pytest.param({"self": 0}, ValueError, r"limits\['self'\] must be a positive", id="zero"),
        pytest.param({"user": -1}, ValueError, r"limits\['user'\]", id="negative"),
        pytest.param({"self": "8000"}, TypeError, r"limits\['self'\] must be an int", id="str"),
        pytest.param({"self": True}, TypeError, r"limits\['self'\]", id="bool"),
        pytest.param([("self", 5)], TypeError, "limits must map", id="not-a-mapping"),
    ],
)
def test_bad_limits_raise_naming_the_key(
    tmp_path: Path, limits: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        memory_tool(tmp_path, limits=limits)


@pytest.mark.parametrize(
    "limits",
    [
        pytest.param({"self": 0}, id="zero"),
        pytest.param({"user": 10_000_001}, id="over-ten-million"),
        pytest.param({"team": 5}, id="unknown-key"),
    ],
)
def test_a_bad_limit_value_is_an_argument_error_of_the_tree(tmp_path: Path, limits: Any) -> None:
    with pytest.raises(ArgumentError) as info:
        memory_tool(tmp_path, limits=limits)
    assert isinstance(info.value, ToolnexusError)
    assert isinstance(info.value, ValueError)


async def test_the_largest_limit_is_accepted(tmp_path: Path) -> None:
    tool = memory_tool(tmp_path, limits={"self": 10_000_000})
    result = await tool.execute({"action": "add", "text": "x"})
    assert result.output.endswith("MEMORY.md: 1 entry, 4/10000000 characters used.")


def test_invalid_identity_raises_home_error(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_text(
        "---\nname: Ada\nmemory_limits: {self: -5}\n---\n", encoding="utf-8"
    )
    with pytest.raises(HomeError, match="memory_limits"):
        memory_tool(tmp_path)


def test_missing_folder_raises_home_error(tmp_path: Path) -> None:
    with pytest.raises(HomeError, match="not a folder"):
        memory_tool(tmp_path / "nope")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"target": "team", "limit": 5}, "target: unknown", id="target"),
        pytest.param({"target": "self", "limit": 0}, "limit: must be a positive", id="limit"),
    ],
)
def test_store_validates_its_arguments(tmp_path: Path, kwargs: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MemoryStore(tmp_path, **kwargs)


def test_public_surface(tmp_path: Path) -> None:
    from toolnexus.memory import _tool as memory

    assert MEMORY_FILES == {"self": "MEMORY.md", "user": "USER.md"}
    assert sorted(memory.__all__) == [
        "Block",
        "MEMORY_FILES",
        "MemoryDocument",
        "MemoryStore",
        "Op",
        "Target",
        "memory_tool",
        "parse_memory",
    ]
    assert isinstance(agents.memory_tool, type(memory_tool))
    assert isinstance(memory_tool(tmp_path), Tool)
