"""IDENTITY.md: frontmatter config validated strictly, with errors naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolnexus.agents import Home
from toolnexus.errors import HomeError
from toolnexus.home._identity import (
    DEFAULT_MEMORY_LIMITS,
    IdentityConfig,
    parse_identity,
)

PATH = Path("home/IDENTITY.md")


def test_full_config_and_body() -> None:
    identity = parse_identity(
        "---\n"
        "name: Ada\n"
        "description: A research assistant.\n"
        "read_only: true\n"
        "memory_limits: {self: 500}\n"
        "tools: [clock]\n"
        "model: gpt-4o-mini\n"
        "---\n"
        "\n"
        "You are Ada.\n\n",
        path=PATH,
    )
    assert identity.config == IdentityConfig(
        name="Ada",
        description="A research assistant.",
        read_only=True,
        memory_limits={"self": 500},  # type: ignore[arg-type]
        tools=("clock",),
        model="gpt-4o-mini",
    )
    assert identity.config.memory_limits.for_target("self") == 500
    assert identity.config.memory_limits.for_target("user") == DEFAULT_MEMORY_LIMITS["user"]
    assert identity.body == "You are Ada."


def test_crlf_and_bom_parse_like_lf() -> None:
    lf = parse_identity("---\nname: Ada\n---\nLine one.\nLine two.\n", path=PATH)
    crlf = parse_identity("\ufeff---\r\nname: Ada\r\n---\r\nLine one.\r\nLine two.\r\n", path=PATH)
    assert crlf == lf


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "You are Ada.\n",
            "home/IDENTITY.md:1: no YAML frontmatter: the file must start with a '---' line, "
            "then YAML keys, then a closing '---' line",
            id="no-frontmatter",
        ),
        pytest.param(
            "---\nname: Ada\n",
            "home/IDENTITY.md:1: frontmatter is never closed: add a '---' line after the YAML keys",
            id="unclosed",
        ),
        pytest.param(
            "---\nname: Ada\nx: y: z\n---\n",
            "home/IDENTITY.md:3: invalid YAML in frontmatter: "
            "mapping values are not allowed in this context",
            id="bad-yaml",
        ),
        pytest.param(
            "---\n- name\n---\n",
            "home/IDENTITY.md:2: frontmatter must be a YAML mapping of keys, got list",
            id="not-a-mapping",
        ),
    ],
)
def test_malformed_frontmatter(text: str, message: str) -> None:
    with pytest.raises(HomeError) as info:
        parse_identity(text, path=PATH)
    assert str(info.value) == message


def test_every_bad_key_is_reported_with_its_line() -> None:
    text = (
        "---\n"
        "name: Ada\n"
        "descripton: typo\n"
        "read_only: maybe\n"
        "memory_limits: {self: 0, users: 10}\n"
        "---\n"
    )
    with pytest.raises(HomeError) as info:
        parse_identity(text, path=PATH)
    assert info.value.problems == (
        "home/IDENTITY.md:4: key 'read_only': Input should be a valid boolean, "
        "unable to interpret input",
        "home/IDENTITY.md:5: key 'memory_limits.self': Input should be greater than 0",
        "home/IDENTITY.md:5: unknown key 'memory_limits.users' (allowed: self, user)",
        "home/IDENTITY.md:3: unknown key 'descripton' "
        "(allowed: name, description, read_only, memory_limits, memory_review, tools, model, "
        "sessions, scanner, store, store_key)",
    )


def test_name_is_required() -> None:
    with pytest.raises(HomeError) as info:
        parse_identity("---\ndescription: nobody\n---\n", path=PATH)
    assert info.value.problems == ("home/IDENTITY.md:2: missing required key 'name'",)


def test_missing_identity_file(tmp_path: Path) -> None:
    with pytest.raises(HomeError, match=r"IDENTITY\.md: missing: every home needs an IDENTITY\.md"):
        Home(tmp_path).identity()


def test_undecodable_identity_file(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_bytes(b"---\nname: \xff\n---\n")
    with pytest.raises(HomeError) as info:
        Home(tmp_path).identity()
    # The one reader's words, as for every home file.
    assert (
        str(info.value) == f"{tmp_path / 'IDENTITY.md'}: not UTF-8 text (byte 10): save it as UTF-8"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("1", 1, id="one"),
        pytest.param('"20000"', 20_000, id="numeric-string"),
        pytest.param("10000000", 10_000_000, id="the-largest"),
    ],
)
def test_memory_limits_take_whole_numbers_up_to_ten_million(value: str, expected: int) -> None:
    identity = parse_identity(f"---\nname: Ada\nmemory_limits: {{user: {value}}}\n---\n", path=PATH)
    assert identity.config.memory_limits.for_target("user") == expected


def test_a_memory_limit_over_ten_million_names_the_key() -> None:
    with pytest.raises(HomeError) as info:
        parse_identity("---\nname: Ada\nmemory_limits: {self: 10000001}\n---\n", path=PATH)
    assert info.value.problems == (
        "home/IDENTITY.md:3: key 'memory_limits.self': Input should be less than or equal "
        "to 10000000",
    )
