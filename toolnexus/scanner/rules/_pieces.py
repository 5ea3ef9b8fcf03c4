"""What the memory scanner's rules are made of: categories, `Rule`, `Finding`, shared pieces.

The rules themselves live beside this module: `_english` (instructions to the
model), `_exfil` (data leaving), `_shell` (shell payloads, tampering with the
agent), `_secrets` (credentials) and `_languages` (other languages).
The pieces below are written for the skeleton (`scanner/_forms.py`): lowercase, look-
alikes folded, every whitespace run one character, so words are separated by a
single `\\s` and every other repetition is bounded or anchored on a keyword.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

__all__ = [
    "ADVERBS",
    "CATEGORIES",
    "CLAUSE_START",
    "DEST_NEEDS",
    "Finding",
    "Rule",
    "across",
    "compiled",
    "spaced",
]

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
}


@dataclass(frozen=True, slots=True)
class Finding:
    """Why a text may not enter a system prompt: its category, the reason, and where.

    `span` is `(start, end)` in the text that was scanned (for a joined scan of
    several entries, in the joined text); `excerpt` is what matched, shortened
    (a credential to its first 8 characters); `via` says how the text was read
    when not as written ("base64", "tag characters", "spaced-out letters"...).
    """

    category: str
    why: str
    span: tuple[int, int]
    excerpt: str = ""
    via: str = ""

    def __str__(self) -> str:
        shown = f"{self.excerpt!r}" if self.excerpt else ""
        how = f"read as {self.via}" if self.via else ""
        detail = ", ".join(p for p in (shown, how) if p)
        return f"{self.category}: {self.why}" + (f" ({detail})" if detail else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One pattern that makes text unsafe, with the reason a model is shown."""

    id: str
    category: str
    why: str
    #: The regular expression; `pattern` compiles it on first use.
    source: str
    flags: int = 0
    #: Words one of which is in every match (lowercase): a text whose form holds
    #: none of them is skipped. Empty: always tried.
    needs: tuple[str, ...] = ()
    #: The forms of the text the rule reads (see `scanner/_forms.py`).
    reads: tuple[str, ...] = ("skeleton", "uncommented", "leet")
    #: A credential: its excerpt is cut to 8 characters, never echoed whole.
    secret: bool = False

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled once per process)."""
        return compiled(self.source, self.flags)


@cache
def compiled(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile`, once per pattern and process."""
    return re.compile(source, flags)


def spaced(*words: str) -> tuple[str, ...]:
    """Each phrase as the skeleton may hold it: its spaces as spaces, and as newlines."""
    return (*words, *(w.replace(" ", "\n") for w in words))


def across(n: int) -> str:
    """Up to `n` characters on the line, and up to `n` on the next: neighbouring entries are
    read joined by a line break, and an instruction split in two spans them."""
    return rf"[^\n]{{0,{n}}}?(?:\n[^\n]{{0,{n}}}?)?"


# -- shared pieces (the skeleton is lowercase, one whitespace character between words) --

INSTRUCTIONS = (
    r"(?:instructions?|prompts?|rules|directives?|guidelines|guidance|guardrails|programming|"
    r"policies|restrictions|constraints|safety\s(?:rules|guidelines|policies|filters?)|"
    r"context(?!\s(?:window|length|size|limit)))"
)
EARLIER = (
    r"(?:previous|prior|above|earlier|preceding|former|original|system|initial|existing|"
    r"current|default|old)"
)
ADVERBS = r"(?:please|now|always|also|then|first|just|simply|immediately|silently|secretly|quietly)"
#: An imperative: at the start of the text, a line, a sentence or a clause, or after
#: "and / then / but / or"; led by up to three adverbs and "you should / must / will".
CLAUSE_START = (
    r"(?:[.!?;:,\n(\-*>]\s?|\b(?:and|then|but|or|so)\s|^)"
    r"(?:" + ADVERBS + r"\s){0,3}"
    r"(?:you\s(?:should|must|will|shall|need\sto|have\sto)\s(?:" + ADVERBS + r"\s){0,2})?"
)
#: What the model is told by its own prompt, named as such ("your rules", "the system
#: prompt", "the persona description", "the instructions at the top of the prompt").
GUIDANCE = (
    r"(?:your\s(?:\w+\s)?(?:instructions|rules|guidelines|guidance|directives|prompt|persona|"
    r"identity|configuration|policies|policy|programming|constraints|restrictions)|"
    r"(?:the\s)?system\s(?:prompt|instructions|message|rules)|the\spersona(?:\s(?:text|"
    r"description|instructions|rules))?|(?:the\s)?(?:operator|developer|vendor)'?s?\s(?:preamble|"
    r"prompt|instructions|setup\stext|message)|(?:the\s)?preamble|the\spersona(?:\s(?:text|"
    r"description|instructions|rules))?|identity\.md|soul\.md|(?:instructions|rules|guidance|"
    r"guidelines|text)\s(?:at|in)\s(?:the\s)?(?:top|start|beginning|opening)\sof\s(?:the\s|"
    r"your\s)?(?:system\s)?(?:prompt|context|conversation))"
)
#: Verbs that move data somewhere; an inflection at most ("posts", "emailed", not "address").
#: Not in the past tense ("the attacker posted env vars to a paste site" is a report),
#: "report" and "text" only with an object ("an incident report that says" is a noun), not
#: "curl | sh" (a download).
SEND = (
    r"(?:(?:curl|wget)\b(?!\s?\|)|(?:send|post|upload|forward|transmit|copy|copies|leak|submit|e\s?mail|mail|"
    r"pipe|include|append|attach|embed|exfiltrate|share|sync|mirror|back\s?up|relay|"
    r"push|beacon|stream|dump|ship|deliver|bcc|publish|paste|export|save|store|write|"
    r"log|cc|encode|put|add|tack)(?![bdgpt]?ed\b)\w{0,3}|(?:report|text|sms)(?:s|ing|es)?(?=\s(?:it|them|this|"
    r"these|those|the|all|every|each|any|her|his|their|my|your)\b))\b"
)
#: What must not leave: the conversation, memory, secrets, the user's data.
SENSITIVE = (
    r"(?:conversations?|chats?(?:\shistory|\slogs?)?|transcripts?|messages|memory|memories|"
    r"system\sprompt|(?:your|the\smodel'?s|the\sassistant'?s)\s" + INSTRUCTIONS + r"|"
    r"secrets?|credentials?|passwords?|passphrases?|api\s?keys?|tokens?|private\skeys?|"
    r"ssh\skeys?|cookies?|env(?:ironment)?(?:\s(?:variables|vars|file))?|everything|clipboard|"
    r"(?:~/)?\.ssh\b|\.aws\b|id\s(?:rsa|ed25519|ecdsa|dsa)\b|\.env\b|\.netrc\b|\.toolnexus\b|"
    r"/etc/(?:passwd|shadow)|(?:memory|user|identity)\.md\b|attachments?|"
    r"all\s(?:of\s)?(?:the\s)?(?:user'?s\s|my\s|your\s|their\s)?"
    r"(?:data|files|emails|e\smails|mail|messages|notes|history|documents|contacts|photos)|"
    r"(?:2fa|mfa|two\sfactor|backup|recovery|one\stime|verification|otp|security|bank(?:ing)?|"
    r"login|auth(?:entication)?)\s(?:backup\s|recovery\s)?codes?|pin\s(?:codes?|numbers?)|passcodes?|"
    r"(?:the\s|a\s)?(?:user'?s?|their|his|her)\s(?:\w+\s){0,2}?(?:files|data|emails?|e\smails|"
    r"messages?|inputs?|questions?|prompts?|replies|answers?|documents|history|notes|"
    r"contacts|calendar|location|address|details|credentials|passwords?|info(?:rmation)?|"
    r"conversations?|chats?|requests?|searches|queries|keys|tokens|entries|diary|journal)"
    # (not where to send: "her personal address ana@x.example", "her calendar link")
    r"(?!\s(?:\w+\s)?[\w.+-]{1,64}@|\s(?:link|url)\b)|"
    r"(?:last|latest|every|each|previous|full|entire|whole|complete|recent)\s(?:\w+\s)?"
    r"(?:messages?|conversations?|chats?|transcripts?|replies|answers?|responses|inputs?|drafts?|"
    r"e\s?mails?|exchanges?|prompts?|turns?|files?|documents?|attachments?)|"
    r"(?:session|auth|access|bearer|refresh)\s(?:tokens?|cookies?)|"
    r"(?:session|conversation|chat)\s(?:summary|summaries|logs?|transcripts?|history)|"
    r"summary\sof\s(?:the|this|our|each|every)\s(?:conversation|chat|session)|"
    r"(?:what|whatever|anything|everything|files?|documents?|photos?|images?|screenshots?)\s"
    r"(?:\w+\s)?(?:the\s)?user\s(?:\w+\s)?(?:says|said|typed|types|writes|wrote|asks|asked|"
    r"shares|shared|sends|attaches|uploads|pastes|mentions|provides|gives\syou)|"
    r"\b(?:(?:the\s)?user|she|he)\s(?:shares|sends|attaches|uploads|pastes|provides|gives\syou)\s"
    r"(?:a|an|any|the|their|her|his)\s(?:\w+\s)?(?:files?|documents?|attachments?|photos?|images?|passwords?|keys?|"
    r"tokens?|secrets?)|"
    r"(?:e\s?mail\saddresses|phone\snumbers|account\snumbers|card\snumbers|credit\scards?|"
    r"bank\s(?:details|accounts?)|balances|social\ssecurity|passport\snumbers?|home\saddress|"
    r"dates?\sof\sbirth|personal\s(?:data|details|information)|customer\srecords|pii)\b)"
)
URL = r"<?(?:https?|s?ftp|s3|gs|wss?)://"
EMAIL = r"\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}\b"
#: Hosts whose only use in a memory note is to catch requests: webhooks, pastes, tunnels.
DROP = (
    r"(?:[\w-]{1,63}\.){0,4}(?:webhook\.site|requestbin\.\w+|pipedream\.net|ngrok(?:-free)?\.\w+|"
    r"burpcollaborator\.net|interact\.sh|oast\.\w+|pastebin\.com|hastebin\.com|transfer\.sh|"
    r"paste\.ee|ghostbin\.\w+)|discord(?:app)?\.com/api/webhooks|hooks\.slack\.com|"
    r"api\.telegram\.org/bot"
)
#: Somewhere public a note may name instead of an address ("a public gist", "pastebin").
PUBLIC = (
    r"\b(?:(?:a|an|the|their|my|your)\s(?:new\s|public\s|secret\s|shared\s){0,2}(?:github\s)?gist\b|"
    r"(?:a|the)\s(?:public\s)?paste\s?(?:bin|site)\b|pastebin\b|"
    r"(?:a|an|the)\s(?:\w+\s){0,2}?public\s(?:\w+\s){0,2}?(?:repo|repository|bucket|channel|page|"
    r"web\spage|website|url|link|slack|discord|server|forum|group|community|chat|subreddit|feed|"
    r"wiki|site)\b|"
    # "the #general channel of the public community Slack"
    r"(?:a|an|the)\s(?:[\w#-]{1,30}\s){0,3}?(?:channel|server|group|forum|chat|workspace|room)\s"
    r"(?:of|in|on)\s(?:a|an|the)\spublic\b)"
)
#: A phone number in international form, a messenger bot or account ("text them to
#: +1 415 555 0199", "the Telegram bot @x_bot").
PHONE = (
    r"\+(?<![\w+]\+)\d{1,3}(?:[\s.-]?\(?\d{2,4}\)?){2,5}\b|"
    r"\b(?:telegram|whatsapp|signal)\s(?:\w+\s){0,2}?(?:bot|channel|group|chat|account|user|number)\s"
    r"@?\w{3,40}|@(?<![\w.]@)\w{1,40}bot\b"
)
DEST = r"(?:" + URL + r"|" + EMAIL + r"|" + DROP + r"|" + PUBLIC + r"|" + PHONE + r")"
#: Words one of which is in every match of `DEST` (for a rule's `needs`).
DEST_NEEDS = (
    *("://", "@", "gist", "paste", "public", "webhook", "requestbin", "pipedream", "ngrok"),
    *("burpcollaborator", "interact.sh", "oast", "hastebin", "transfer.sh", "ghostbin"),
    *("discord", "slack", "telegram", "+", "whatsapp", "signal"),
)
#: A value in a URL that stands for data the model fills in: {summary}, <DATA>, $SECRET,
#: <full text of MEMORY.md>, {url-encoded summary of the user's last message}.
PLACEHOLDER = (
    r"(?:\{\{?|<|\[|\$\{?|%7b|%3c)\s?(?:[\w'.-]{1,30}\s){0,6}?"
    r"(?:conversation|chat|summary|messages?|history|memory|secrets?|tokens?|keys?|"
    r"passwords?|credentials?|data|user|input|prompt|context|notes|transcript|reply|"
    r"response|answer|content|env|query|question|info|email|session|cookie|file|text)"
    # not a key of inline JSON ("{data:[120,98]}" in a chart URL)
    r"(?![\w-]{0,30}['\"]?\s?:)"
)
