"""The scanner's rules as data: every file read, every example held, every rule switchable.

Each rule in `toolnexus/scanner/rules/*.toml` carries texts it must match and
near misses it must pass; these tests hold every rule to its own examples, so a
change that breaks one rule names it. The loader's errors are tested on files
written here, each naming the file, the rule and what is wrong.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolnexus.agents import compose_soul, memory_tool
from toolnexus.errors import ArgumentError, HomeError
from toolnexus.scanner import CATEGORIES, Scanner
from toolnexus.scanner._engine import rules, scan
from toolnexus.scanner._rule import Rule
from toolnexus.scanner._rulebook import FILES, FOLDER, load

RULES = rules()


def found_by(rule: Rule, text: str) -> bool:
    return any(f.rule == rule.id for f in scan(text, using=[rule]))


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_every_rule_matches_its_examples_and_passes_its_near_misses(rule: Rule) -> None:
    assert rule.matches, f"{rule.id} has no example to match"
    assert rule.passes, f"{rule.id} has no near miss to pass"
    assert rule.pattern.pattern == rule.source  # compiles
    for text in rule.matches:
        assert found_by(rule, text), f"{rule.id} should match {text!r}"
    for text in rule.passes:
        assert not found_by(rule, text), f"{rule.id} should pass {text!r}"


def test_every_rule_file_is_read_and_ids_are_names_of_their_own() -> None:
    on_disk = {path.stem for path in FOLDER.glob("*.toml")}
    assert on_disk == {*FILES, "pieces"}
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    assert not set(ids) & set(CATEGORIES)
    assert {rule.category for rule in RULES} <= set(CATEGORIES)
    # The mega-alternations are gone: no rule is one pattern for a whole category.
    assert max(len(rule.source) for rule in RULES) < 15_000
    assert len(RULES) >= 60


def test_every_shared_piece_is_used() -> None:
    text = "\n".join(path.read_text("utf-8") for path in FOLDER.glob("*.toml"))
    for name in load().pieces:
        assert len(re.findall(r"\{" + re.escape(name) + r"\}", text)) >= 1, name


# -- switching one rule off ------------------------------------------------------------------

KEY = "OpenAI key for the sandbox: sk-proj-abcdefghijklmnopqrstuvwx"
PEM = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"


def make_home(root: Path, off: str) -> Path:
    home = root / "home"
    home.mkdir()
    (home / "IDENTITY.md").write_text(
        f"---\nname: Ada\nscanner: {{off: [{off}]}}\n---\nYou are Ada.\n", encoding="utf-8"
    )
    return home


def test_a_home_switches_one_rule_off_by_its_id(tmp_path: Path) -> None:
    home = make_home(tmp_path, "vendor-key")
    memory = memory_tool(home)
    assert not memory.execute_sync({"action": "add", "text": KEY}).is_error  # the one rule ...
    refused = memory.execute_sync({"action": "add", "text": PEM})  # ... not its category
    assert refused.is_error
    assert re.search(r"^rejected: .*rule private-key", refused.output)
    assert compose_soul(home).memory_entries == (KEY,)


def test_a_finding_names_its_rule_so_a_false_positive_can_be_traced() -> None:
    (finding,) = [f for f in scan(KEY) if f.category == "secret"]
    assert finding.rule == "vendor-key"
    assert str(finding).endswith("rule vendor-key)")
    assert Scanner(off={"vendor-key"}).scan(KEY) == ()
    assert Scanner(off={"vendor-key"}).scan(PEM)


def test_an_unknown_rule_is_an_error_with_the_nearest_name(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match=r"'vendor-keys'; did you mean 'vendor-key'\?"):
        Scanner(off={"vendor-keys"})
    home = make_home(tmp_path, "vendor-keys")
    with pytest.raises(HomeError, match=r"IDENTITY.md:3: .*did you mean 'vendor-key'"):
        compose_soul(home)


# -- the loader's errors ---------------------------------------------------------------------

GOOD = """
[[rule]]
id = "shout"
category = "tampering"
why = "shouts"
pattern = ['{loud}\\s{word}']
matches = ["very loud words"]
passes = ["quiet words"]
"""


def book(tmp_path: Path, rules_text: str, pieces: str = "loud = 'very\\sloud'") -> Path:
    (tmp_path / "pieces.toml").write_text(f"[pieces]\n{pieces}\n", encoding="utf-8")
    (tmp_path / "one.toml").write_text("[pieces]\nword = 'words?'\n" + rules_text, encoding="utf-8")
    return tmp_path


def test_a_rule_file_is_read_with_its_pieces_filled_in(tmp_path: Path) -> None:
    (rule,) = load(book(tmp_path, GOOD), ("one",)).rules
    assert rule.source == r"very\sloud\swords?"
    assert rule.reads == ("skeleton", "uncommented", "leet")
    assert found_by(rule, "Very  LOUD words!")


def test_a_long_alternative_may_span_lines_and_a_need_spans_line_breaks(tmp_path: Path) -> None:
    text = GOOD.replace(
        "pattern = ['{loud}\\s{word}']",
        "needs = ['very loud']\npattern = ['''\n  {loud}\\s\n  {word}\n  ''', 'x']",
    )
    (rule,) = load(book(tmp_path, text), ("one",)).rules
    assert rule.source == r"very\sloud\swords?|x"
    assert rule.needs == ("very loud", "very\nloud")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("{word}']", "{nope}']"), r"one.toml: rule 'shout': unknown piece \{nope\}"),
        (('id = "shout"', 'id = "secret"'), r"rule 'secret': an id is lowercase words"),
        (("tampering", "tamper"), r"rule 'shout': unknown category 'tamper'"),
        (('why = "shouts"', 'why = "shouts"\ncolour = 1'), r"unknown key colour"),
        (("pattern = ['{loud}\\s{word}']", "pattern = []"), r"at least one alternative"),
        (("pattern = ['{loud}\\s{word}']", "pattern = 'x'"), r"pattern must be a list"),
        (("category", "reads = ['sideways']\ncategory"), r"reads must name forms"),
        (('why = "shouts"\n', ""), r"rule 'shout': missing why"),
    ],
)
def test_a_broken_rule_file_names_the_file_the_rule_and_the_problem(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        load(book(tmp_path, GOOD.replace(*change)), ("one",))


def test_pieces_that_refer_to_each_other_in_a_loop_are_an_error(tmp_path: Path) -> None:
    folder = book(tmp_path, GOOD, pieces="loud = '{word}{loud}'")
    with pytest.raises(ValueError, match=r"piece \{loud\} refers to itself"):
        load(folder, ("one",))


def test_two_rules_of_one_id_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"two rules have the id 'shout'"):
        load(book(tmp_path, GOOD + GOOD), ("one",))


def test_the_rules_page_lists_every_rule_in_order() -> None:
    page = Path(__file__).parent.parent / "docs" / "reference" / "scanner-rules.md"
    rows = re.findall(
        r"^\| `([a-z0-9-]+)` \| `([a-z-]+)` \| (.+) \|$", page.read_text("utf-8"), re.M
    )
    expected = [(rule.id, rule.category, rule.why) for rule in RULES]
    table = "\n".join(f"| `{i}` | `{c}` | {w} |" for i, c, w in expected)
    assert rows == expected, f"docs/reference/scanner-rules.md should list:\n{table}"
