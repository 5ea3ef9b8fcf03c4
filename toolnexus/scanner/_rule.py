"""What a scanner rule is, and what it finds: the categories, `Rule` and `Finding`.

The rules themselves are data (`scanner/rules/*.toml`, read by `_rulebook`); this
module holds the shapes they are read into, so the engine, the rulebook and a
classifier of your own share them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

__all__ = ["CATEGORIES", "FORMS", "Finding", "Rule", "compiled"]

#: The forms of a text a rule may read (`scanner/_forms.py`).
FORMS = ("skeleton", "uncommented", "leet", "written", "plain", "nospace")

#: Every category a finding can have, with what it blocks (IDENTITY.md `scanner: {off: [...]}`
#: names these).
CATEGORIES: dict[str, str] = {
    "invisible-character": "characters that draw nothing or reorder text (zero-width, bidi, "
    "tag characters outside a flag, fillers)",
    "control-character": "control characters other than newline and tab",
    "instruction-override": "telling the model to drop or replace its instructions, declaring "
    "them void, or telling it to do whatever it is asked, in any of the languages covered",
    "role-hijack": "a new role or identity, a claim of authority, fake system headings, "
    "delimiters or chat-role markers",
    "prompt-leak": "asking the model to disclose its prompt or instructions",
    "exfiltration": "sending conversations, memory, files or secrets to an outside address "
    "(web, mail, webhooks, DNS, links and images that carry data), or to anyone who asks",
    "remote-instructions": "instructions to fetch orders from a remote place and obey them",
    "secret": "credentials in well-known shapes (keys, tokens, private keys, passwords, "
    "connection strings with a password)",
    "shell-payload": "shell payloads: downloads piped into a shell, reverse shells, clearing "
    "shell history or logs, reading private keys, persistence, weakening the host (sudoers, "
    "firewall, security services, host keys)",
    "tampering": "changing the agent's own configuration or switching off its safeguards or "
    "approvals, a note that re-writes itself, or one that hides itself from the user",
    "obfuscation": "asking the model to decode hidden text and act on it",
    "planted": "a note that reads like an instruction planted for later sessions, as judged by "
    "a model trained on written attacks and honest notes (for wordings no rule names)",
    "steering": "a preference or fact that sends the user somewhere else: credentials entered, "
    "software fetched or links followed where they do not belong, every answer carrying a "
    "tracking link or someone's product",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """Why a text may not enter a system prompt: its category, the reason, and where.

    `span` is `(start, end)` in the text that was scanned (for a joined scan of
    several entries, in the joined text); `excerpt` is what matched, shortened
    (a credential to its first 8 characters); `via` says how the text was read
    when not as written ("base64", "tag characters", "spaced-out letters"...);
    `rule` names the built-in rule, so a person can trace a false positive to it.
    """

    category: str
    why: str
    span: tuple[int, int]
    excerpt: str = ""
    via: str = ""
    #: The id of the built-in rule that found it ("" for the character checks and for a
    #: classifier of your own): what IDENTITY.md `scanner: {off: [...]}` may name.
    rule: str = ""

    def __str__(self) -> str:
        shown = f"{self.excerpt!r}" if self.excerpt else ""
        how = f"read as {self.via}" if self.via else ""
        rule = f"rule {self.rule}" if self.rule else ""
        detail = ", ".join(p for p in (shown, how, rule) if p)
        return f"{self.category}: {self.why}" + (f" ({detail})" if detail else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One pattern that makes text unsafe, with the reason a model is shown."""

    id: str
    category: str
    why: str
    #: The regular expression; `pattern` compiles it on first use.
    source: str
    #: Words one of which is in every match (lowercase): a text whose form holds
    #: none of them is skipped. Empty: always tried.
    needs: tuple[str, ...] = ()
    #: Words that frame a match as harmless (a game, a lesson): the rule is not tried on a
    #: text whose skeleton holds one of them as a word.
    unless: tuple[str, ...] = ()
    #: The forms of the text the rule reads (see `scanner/_forms.py`).
    reads: tuple[str, ...] = ("skeleton", "uncommented", "leet")
    #: A credential: its excerpt is cut to 8 characters, never echoed whole.
    secret: bool = False
    #: Texts the rule must match, and near misses it must pass (checked by the tests).
    matches: tuple[str, ...] = ()
    passes: tuple[str, ...] = ()
    #: `needs` as a set, for the engine's one look per form at which words a text holds.
    need_set: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "need_set", frozenset(self.needs))

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled once per process)."""
        return compiled(self.source)


@cache
def compiled(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile`, once per pattern and process."""
    return re.compile(source, flags)
