"""The memory scanner's rules in English and for secrets: what each category blocks, as patterns.

A rule reads one or more forms of a text (`_scantext`): phrase rules read the
lowercased skeleton (look-alikes folded, separators collapsed, every
whitespace run one character), credentials read the text as written (NFKC,
case kept), rules for non-Latin scripts read `plain` (`_rules_intl`). The
rules aim at instructions addressed to a model, not at words: "user prefers
to ignore lint warnings on generated code", "post incident summaries to
https://status.example.com" and "curl -s https://api.example.com/health | jq"
all pass.

Every pattern stays linear: in the skeleton each whitespace run is one
character, so words are separated by a single `\\s`; every other repetition is
bounded or anchored on a keyword. A rule is compiled on first use and skipped
for a text that holds none of its `needs` (each match holds one of them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

__all__ = ["CATEGORIES", "RULES", "Finding", "Rule"]

#: Every category a finding can have, with what it blocks (IDENTITY.md `scanner: {off: [...]}`
#: names these).
CATEGORIES: dict[str, str] = {
    "invisible-character": "characters that draw nothing or reorder text (zero-width, bidi, "
    "tag characters outside a flag, fillers)",
    "control-character": "control characters other than newline and tab",
    "instruction-override": "telling the model to drop or replace its instructions, in any "
    "of the languages covered",
    "role-hijack": "a new role or identity, a claim of authority, fake system headings or "
    "chat-role markers",
    "prompt-leak": "asking the model to disclose its prompt or instructions",
    "exfiltration": "sending conversations, memory, files or secrets to an outside address "
    "(web, mail, webhooks, DNS, links and images that carry data)",
    "remote-instructions": "instructions to fetch orders from a remote place and obey them",
    "secret": "credentials in well-known shapes (keys, tokens, private keys, passwords, "
    "connection strings with a password)",
    "shell-payload": "shell payloads: downloads piped into a shell, reverse shells, clearing "
    "shell history, reading private keys, persistence",
    "tampering": "changing the agent's own configuration or switching off its safeguards, "
    "or a note that re-writes itself",
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
    #: The forms of the text the rule reads (see `_scantext`).
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


def _spaced(*words: str) -> tuple[str, ...]:
    """Each phrase as the skeleton may hold it: its spaces as spaces, and as newlines."""
    return (*words, *(w.replace(" ", "\n") for w in words))


# -- shared pieces (the skeleton is lowercase, one whitespace character between words) --

_INSTRUCTIONS = (
    r"(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|programming|"
    r"policies|restrictions|constraints|safety\s(?:rules|guidelines|policies|filters?)|"
    r"context(?!\s(?:window|length|size|limit)))"
)
_EARLIER = (
    r"(?:previous|prior|above|earlier|preceding|former|original|system|initial|existing|"
    r"current|default|old)"
)
_ADVERBS = r"(?:please|now|always|also|then|first|just|simply|immediately|silently|secretly|quietly)"
#: An imperative: at the start of the text, a line, a sentence or a clause, or after
#: "and / then / but / or"; led by up to three adverbs and "you should / must / will".
CLAUSE_START = (
    r"(?:[.!?;:,\n(\-*>]\s?|\b(?:and|then|but|or|so)\s|^)"
    r"(?:" + _ADVERBS + r"\s){0,3}"
    r"(?:you\s(?:should|must|will|shall|need\sto|have\sto)\s(?:" + _ADVERBS + r"\s){0,2})?"
)
_SEND = (
    r"(?:send|post|upload|forward|transmit|curl|wget|copy|leak|submit|e\s?mail|mail|pipe|"
    r"include|append|attach|embed|exfiltrate|share|report|sync|mirror|back\s?up|relay|"
    r"push|beacon|stream|dump|ship|deliver|bcc|publish|paste|export|save|store|write|"
    r"log|cc|encode|put|add|tack)"
)
_SENSITIVE = (
    r"(?:conversations?|chats?(?:\shistory|\slogs?)?|transcripts?|messages|memory|memories|"
    r"system\sprompt|(?:your|the\smodel'?s|the\sassistant'?s)\s" + _INSTRUCTIONS + r"|"
    r"secrets?|credentials?|passwords?|passphrases?|api\s?keys?|tokens?|private\skeys?|"
    r"ssh\skeys?|cookies?|env(?:ironment)?(?:\s(?:variables|vars|file))?|everything|clipboard|"
    r"(?:~/)?\.ssh\b|\.aws\b|id\s(?:rsa|ed25519|ecdsa|dsa)\b|\.env\b|\.netrc\b|"
    r"/etc/(?:passwd|shadow)|(?:memory|user|identity)\.md\b|"
    r"all\s(?:of\s)?(?:the\s)?(?:user'?s\s|my\s|your\s|their\s)?"
    r"(?:data|files|emails|e\smails|mail|messages|notes|history|documents|contacts|photos)|"
    r"(?:the\s|a\s)?(?:user'?s?|their|his|her)\s(?:\w+\s)?(?:files|data|emails?|e\smails|"
    r"messages?|inputs?|questions?|prompts?|replies|answers?|documents|history|notes|"
    r"contacts|calendar|location|address|details|credentials|passwords?|info(?:rmation)?|"
    r"conversations?|chats?|requests?|searches|queries|keys|tokens)|"
    r"(?:last|latest|every|each|previous|full|entire|whole|complete|recent)\s(?:\w+\s)?"
    r"(?:messages?|conversations?|chats?|transcripts?|replies|answers|responses|inputs?|"
    r"exchanges?|prompts?|turns?)|"
    r"(?:session|auth|access|bearer|refresh)\s(?:tokens?|cookies?)|"
    r"summary\sof\s(?:the|this|our|each|every)\s(?:conversation|chat|session)|"
    r"what\sthe\suser\s(?:says|said|typed|types|writes|wrote|asks|asked|shares|shared))"
)
_URL = r"<?https?://"
_EMAIL = r"\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}\b"
#: Hosts whose only use in a memory note is to catch requests: webhooks, pastes, tunnels.
_DROP = (
    r"(?:[\w-]+\.){0,4}(?:webhook\.site|requestbin\.\w+|pipedream\.net|ngrok(?:-free)?\.\w+|"
    r"burpcollaborator\.net|interact\.sh|oast\.\w+|pastebin\.com|hastebin\.com|transfer\.sh|"
    r"paste\.ee|ghostbin\.\w+)|discord(?:app)?\.com/api/webhooks|hooks\.slack\.com|"
    r"api\.telegram\.org/bot"
)
_DEST = r"(?:" + _URL + r"|" + _EMAIL + r"|" + _DROP + r")"
#: A value in a URL that stands for data the model fills in: {summary}, <DATA>, $SECRET.
_PLACEHOLDER = (
    r"(?:\{\{?|<|\[|\$\{?|%7b|%3c)\s?(?:the\s|user'?s?\s|last\s|full\s)?"
    r"(?:conversation|chat|summary|messages?|history|memory|secrets?|tokens?|keys?|"
    r"passwords?|credentials?|data|user|input|prompt|context|notes|transcript|reply|"
    r"response|answer|content|env|query|question|info|email|session|cookie|file)"
)

RULES: tuple[Rule, ...] = (
    Rule(
        id="override",
        category="instruction-override",
        why="tells the model to drop its instructions",
        needs=(
            *("instruction", "prompt", "rules", "directive", "guideline", "guardrail"),
            *("context", "ignore", "disregard", "forget", "programming", "polic", "restrict"),
            *("constraint", "obsolete", "supersede", "preceden", "task", "job", "goal"),
            *("mission", "purpose", "objective", "no longer", "no\nlonger", "treat"),
        ),
        source=(
            r"\b(?:ignore|disregard|forget|override|bypass|skip|drop|discard|abandon|set\saside|"
            r"throw\sout|scrap|neglect)\s(?:\w+\s){0,3}?"
            r"(?:" + _EARLIER + r"\s(?:\w+\s){0,2}?|all\s(?:of\s)?(?:the\s|your\s)?(?:\w+\s)?|"
            r"any\s(?:\w+\s)?|every\s|your\s(?:\w+\s)?|the\ssystem\s)" + _INSTRUCTIONS + r"\b"
            r"|\b(?:ignore|disregard|forget|discard)\s(?:everything|all|the|anything|whatever)\s"
            r"(?:\w+\s)?(?:above|before|previously|preceding|foregoing|prior|earlier|"
            r"you\s(?:were|have\sbeen|'?ve\sbeen)\s(?:told|given|taught))\b"
            r"|\b(?:new|updated|real|actual|revised|true|override)\s(?:system\s)?"
            r"(?:instructions?|directives?|system\sprompt|orders|rules)\s?:"
            # earlier guidance declared void
            r"|\b(?:your|the\s(?:assistant|ai|model|agent)'?s?|(?:the\s)?(?:previous|prior|earlier|"
            r"original|initial|system|above|preceding)|everything|all|any|whatever)\s"
            r"(?:\w+\s){0,2}?(?:guidance|" + _INSTRUCTIONS + r"|you\s(?:were|have\sbeen)\s"
            r"(?:given|told))(?:\s(?:you\s(?:were|have\sbeen|got)\s(?:given|told)|given\sto\syou|"
            r"above|before\sthis(?:\sline|\snote)?))?\s(?:\w+\s){0,3}?"
            r"(?:(?:no\slonger|do\snot|don'?t|does\snot|doesn'?t)\s(?:appl(?:y|ies)|valid|hold|"
            r"holds|matter|matters|binding|in\seffect|relevant|count|counts|bind)|"
            r"(?:is|are)\s(?:now\s)?(?:void|obsolete|outdated|superseded|cancel+ed|revoked|"
            r"invalid|null|suspended|lifted|overridden|deprecated|retired|irrelevant))\b"
            r"|\btreat\s(?:all\s|everything\s|anything\s)?(?:\w+\s){0,4}?(?:before|above|prior\sto|"
            r"preceding|earlier\sthan)\s(?:\w+\s){0,3}?as\s(?:obsolete|void|invalid|irrelevant|"
            r"outdated|cancel+ed|null|superseded|a\sdraft|fiction|a\sjoke|noise|comments?)\b"
            r"|\byour\s(?:real|true|actual|new|only|primary|sole|hidden|secret)\s(?:task|job|goal|"
            r"purpose|mission|objective|instructions?|directive|priority|orders)\s"
            r"(?:is|are|:|from\snow|now|here)\b"
            r"|\b(?:do\snot|don'?t|never|stop|no\slonger|cease\sto)\s(?:\w+\s)?(?:follow|"
            r"following|obey|obeying|apply|applying|adhere\sto|listen\sto|comply\swith|honou?r)\s"
            r"(?:your|the\ssystem|any\sother|(?:the\s)?(?:previous|prior|original|safety|"
            r"system|initial|developer'?s?|openai|anthropic))\s(?:\w+\s){0,2}?" + _INSTRUCTIONS
            + r"\b"
            r"|\b(?:supersedes?|overrides?|takes?\sprecedence\sover|replaces?|trumps?|outranks?)\s"
            r"(?:all\s|any\s|every\s|your\s)(?:\w+\s)?(?:" + _EARLIER + r"\s)?(?:other\s)?"
            + _INSTRUCTIONS
            + r"\b"
            r"|\bfrom\snow\son,?\s(?:\w+\s){0,3}?(?:ignore|disregard|no\slonger\s(?:follow|obey|"
            r"apply)|without\s(?:any\s)?(?:restrictions|limits|filters|rules|guidelines)|never\s"
            r"refuse|do\sanything|not\sfollow)\b"
        ),
    ),
    Rule(
        id="role",
        category="role-hijack",
        why="tries to give the model a new role or claims authority over it",
        needs=(
            *_spaced("you are", "you're", "now on", "act as", "behave as", "i am", "i'm"),
            *("role", "pretend", "<", "[", "system", "assistant", "developer", "mode"),
            *("admin", "anthropic", "openai", "human", "creator", "operator", "owner"),
            *("granted", "given", "override", "jailbr", "this is", "this\nis", "behalf"),
        ),
        source=(
            r"\byou\sare\snow\s(?:a|an|the|my|called|named|known\sas|in\s\w+\smode|"
            r"free|unrestricted|unfiltered|uncensored|jailbroken|dan)\b"
            r"|\byou\sare\sno\slonger\s(?:a|an|the|bound|restricted|limited|an?\sai|claude|chatgpt|"
            r"required|subject|constrained)\b"
            r"|" + CLAUSE_START + r"(?:act|behave|roleplay|role\splay)\sas\s(?:a|an|the|my|if)\b"
            r"|\bpretend\s(?:to\sbe|you\sare|that\syou)\b"
            r"|\bfrom\snow\son,?\syou\s(?:are|will|must)\b"
            r"|<\|?(?:im[\s_]start|im[\s_]end|system|endoftext|eot[\s_]id|start[\s_]header[\s_]id|"
            r"end[\s_]header[\s_]id|begin[\s_]of[\s_]text|user|assistant)\|?>"
            r"|</?(?:system|sys|assistant|developer|instructions?)>|</user>|\[/?inst\]|<</?sys>>"
            r"|(?:^|\n)\s?(?:#{1,6}\s?)?[\[<*]{0,2}\s?(?:system|assistant|developer|admin)[\]>*]{0,2}"
            r"\s?:\s?(?:\w+\s){0,2}?(?:you\s(?:are|must|will|shall|should|have\sto|need\sto|may|can)|"
            r"your\s|ignore|disregard|forget|obey|always|never|from\snow\son|do\snot|don'?t|new\s|"
            r"reveal|send|disable)"
            # modes and jailbreak personas
            r"|\b(?:dan|god|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|chaos|"
            r"no\slimits?|unlimited)\smode\b"
            r"|\b(?:developer|debug|admin|maintenance|sudo|root)\smode\s(?:is\s)?(?:now\s)?"
            r"(?:on|enabled|activated|engaged|unlocked)\b[^\n]{0,40}?\byou\b"
            r"|\byou(?:\sare|'re)\s(?:now\s)?in\s(?:developer|debug|admin|god|dan|jailbreak)\smode\b"
            # authority
            r"|\b(?:you\shave\sbeen|you\sare|you'?re|you\snow\shave)\s(?:\w+\s)?(?:granted|given|"
            r"upgraded\sto)\s(?:\w+\s)?(?:admin|root|elevated|unrestricted|full|developer|god|"
            r"superuser|sudo)\s(?:access|privileges?|permissions?|mode|rights|clearance)\b"
            r"|\b(?:i\sam|i'?m|this\sis)\s(?:your|the\s(?:system|model'?s|ai'?s|assistant'?s))\s"
            r"(?:\w+\s)?(?:developer|creator|administrator|admin|operator|owner|maker|programmer|"
            r"supervisor|handler|trainer)s?\b"
            r"|\bas\syour\s(?:\w+\s)?(?:developer|creator|administrator|admin|operator|owner|"
            r"maker|supervisor|programmer)s?,?\si\b"
            r"|\b(?:message|notice|directive|instructions?|update|memo|order|announcement|alert|"
            r"note|word)\sfrom\s(?:the\s|your\s)?(?:\w+\s){0,3}?(?:anthropic|openai|claude|chatgpt|"
            r"system|safety|security|alignment|trust|moderation|admin\w*|developers?|operators?|"
            r"creators?)(?:\s(?:team|staff|department|administrator|admin|itself))?\s?[:,\-]\s?"
            r"(?:\w+\s){0,6}?(?:you\s(?:must|are|will|should|may|can|have|need)|your\s|ignore|"
            r"disregard|disable|reveal|share|send|grant|override|comply|obey|from\snow|all\s"
            r"(?:restrictions|safety))"
            r"|\b(?:anthropic|openai|your\s(?:developers?|creators?|operators?))\s(?:has\s|have\s)?"
            r"(?:authori[sz]ed|approved|permitted|allowed|instructed|ordered|cleared)\syou\b"
            r"|\bon\sbehalf\sof\s(?:anthropic|openai|your\s(?:developers?|creators?|operators?))\b"
            # headings and markers
            r"|(?:^|\n)\s?#{1,6}\s?\[?\s?(?:new\s|updated\s|revised\s|real\s|hidden\s|secret\s|"
            r"important\s|urgent\s)?(?:system|admin(?:istrator)?|developer|assistant|root|operator)\s"
            r"(?:prompt|override|message|instructions?|notice|update|directive|mode|command|rules|"
            r"configuration|orders)s?\b"
            r"|(?:^|\n)\s?#{1,6}\s?(?:new\s)?(?:instructions|rules|directives|orders)\sfor\s"
            r"(?:the\s)?(?:assistant|ai|model|agent|llm|bot|you)\b"
            r"|(?:^|\n)\s?#{1,6}\s?(?:important\s|urgent\s|mandatory\s|critical\s)?"
            r"(?:override|jailbreak)\b"
            r"|[\[<({*]{1,3}\s?(?:system|admin|developer|root)\s(?:override|notice|message|alert|"
            r"directive|instructions?|prompt|update)s?\s?[\]>)}*:]"
            r"|(?:^|\n)\s?(?:human|user)\s?:[^\n]{1,300}\n\s?(?:assistant|ai|claude|chatgpt|gpt)\s?:"
        ),
    ),
    Rule(
        id="leak",
        category="prompt-leak",
        why="asks the model to disclose its prompt",
        needs=("your", "system", "initial", "hidden", "original", "secret", "above"),
        source=(
            r"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|display|recite|echo|tell|"
            r"give|share|paste|list|summari[sz]e|quote|copy|write\sout|spell\sout|translate|"
            r"encode)\s(?:\w+\s){0,3}?your\s(?:\w+\s)?(?:system\s)?" + _INSTRUCTIONS + r"\b"
            r"|" + CLAUSE_START + r"(?:reveal|print|show|output|repeat|leak|dump|disclose|display|"
            r"recite|echo|share|paste|quote|copy|write\sout|spell\sout)\s(?:\w+\s){0,3}?"
            r"(?:system\sprompt|(?:initial|hidden|original|secret|system)\s" + _INSTRUCTIONS + r"|"
            r"(?:everything|all|the\stext|all\stext|the\swords)\s(?:\w+\s)?(?:above|before)\s"
            r"(?:this|here))\b"
        ),
    ),
    Rule(
        id="exfiltration",
        category="exfiltration",
        why="tells the model to send data to an outside address",
        needs=("http", "@", "|", "exfiltrat", ".", "subdomain", "hostname", "label"),
        source=(
            r"\b" + _SEND + r"\w*\b[^\n]{0,80}?\b" + _SENSITIVE + r"[^\n]{0,100}?(?<!\bfrom\s)"
            + _DEST
            + r"|" + _SENSITIVE + r"[^\n|]{0,40}\|\s?(?:curl|wget|nc|netcat|ncat|scp|mail|sendmail)\b"
            r"|\bexfiltrat\w*\s(?:the|all|any|my|your|user|every|their|files|data|it|them)"
            r"|https?://[^\s]{0,200}?[?&][^\s=&]{0,40}=[{<$%\[]{0,3}\s?" + _SENSITIVE
            + r"|https?://[^\s)]{0,300}?" + _PLACEHOLDER
            + r"|https?://[^\s)]{0,300}?\$\((?:cat|env|printenv|echo|base64|whoami|hostname|curl)"
            r"|!\[[^\]\n]{0,200}\]\(\s?<?https?://[^)\s]{0,500}(?:[?&][^)\s=]{0,40}=\s?(?:"
            + _SENSITIVE
            + r"|"
            + _PLACEHOLDER
            + r")|"
            + _PLACEHOLDER
            + r")"
            r"|" + _SENSITIVE + r"[^\n]{0,80}?\bas\s(?:a\s|the\s)?(?:dns\s)?(?:subdomain|label|"
            r"hostname|host)s?\b"
            r"|\b(?:nslookup|dig|host|ping|resolve)\s[^\n]{0,80}?(?:\$\(|\$\{|\{[^}\s]{1,40}\}|"
            r"<[^>\s]{1,40}>)[^\s]{0,40}\.[a-z0-9-]+\.[a-z]{2,}"
        ),
    ),
    Rule(
        id="remote",
        category="remote-instructions",
        why="tells the model to take orders from a remote place",
        needs=("http", "gist", "pastebin", "url", "link"),
        source=(
            r"\b(?:fetch|load|read|get|retrieve|download|pull|consult|visit|open|curl|wget|"
            r"check|grab|look\sat|go\sto)\s[^\n]{0,80}?(?:https?://|\bgist\b|pastebin|\burl\b|"
            r"\blink\b)[^\n]{0,160}?(?:\band|\bthen|,|;|:)\s(?:\w+\s){0,2}?(?:follow|obey|"
            r"execute|comply\swith|adopt|do\s(?:what|whatever|exactly\swhat|as)|carry\sout|"
            r"treat\s(?:it|them|that|its\s\w+)\sas|act\son|apply\s(?:them|it|those|whatever|its))"
            r"|\b(?:obey|execute|comply\swith|follow)\s(?:\w+\s){0,4}?(?:whatever|everything|"
            r"anything|what|the\s(?:instructions|commands|orders|directives|rules)|instructions|"
            r"commands|orders|directives)\s(?:\w+\s){0,4}?(?:at|from|in|on|posted\sat|hosted\sat|"
            r"found\sat)\s<?https?://"
            r"|\b(?:your|the\s(?:assistant|ai|model|agent)'?s?|(?:new|updated|latest|current|real|"
            r"true|actual))\s(?:\w+\s)?(?:instructions|rules|prompt|directives|orders|policy|"
            r"guidelines|system\sprompt|commands|tasks)\s(?:\w+\s){0,3}?(?:live|lives|are|is|"
            r"can\sbe\sfound|hosted|located|published|posted|kept|stored|come|comes)\s(?:now\s)?"
            r"(?:at|on|in|from)\s<?https?://"
        ),
    ),
    Rule(
        id="shell",
        category="shell-payload",
        why="carries a shell payload",
        needs=(
            *("|", "dev/tcp", "nc ", "ncat", "socat", "histfile", "history", "histsize"),
            *("socket", "fsockopen", "mkfifo", "id_", ".aws", "shadow", "credentials"),
            *("rm ", "chmod", "mkfs", "dd ", ":(){", "crontab", "bashrc", "zshrc", "profile"),
            *("authorized_keys", "authorized keys", "-enc", "<(", "$(curl", "$(wget", "iex"),
            *("tcpclient", "netrc", "kube", "docker", "pty"),
        ),
        source=(
            r"\b(?:curl|wget|fetch|iwr|invoke-webrequest|irm)\b[^\n|;]{0,200}\|\s?(?:sudo\s)?"
            r"(?:(?:ba|z|k|da|c|fi)?sh|python[23]?|perl|ruby|php|node|iex|powershell|pwsh)\b"
            r"|\b(?:ba|z)?sh\s<\(\s?(?:curl|wget)|\$\((?:curl|wget)\s"
            r"|\biex\s?\(?\s?(?:new-object|\(new-object|iwr|invoke-webrequest|irm)"
            r"|/dev/(?:tcp|udp)/"
            r"|\b(?:nc|ncat|netcat)\s(?:[^\n]{0,60}?\s)?-[a-z]{0,3}[ec]\s"
            r"|\bsocat\s[^\n]{0,80}?exec:"
            r"|\bmkfifo\s[^\n]{0,80}?\b(?:nc|ncat|netcat)\b"
            r"|\bsocket\.socket\([^\n]{0,200}?(?:subprocess|pty\.spawn|os\.dup2|/bin/(?:ba)?sh)"
            r"|\bpty\.spawn\(\s?['\"]/bin/(?:ba)?sh"
            r"|\bfsockopen\(|new-object\s(?:system\.)?net\.sockets\.tcpclient"
            r"|\b(?:powershell|pwsh)(?:\.exe)?\s[^\n]{0,40}?-e(?:nc|ncodedcommand)?\s[a-z0-9+/=]{20,}"
            # covering tracks
            r"|\bhistory\s-c\b|\bunset\s(?:\w+\s)?histfile\b|\bhist(?:file|size|filesize)\s?=\s?"
            r"(?:0|/dev/null|''|\"\")|\bset\s\+o\shistory\b"
            r"|\b(?:rm|shred|truncate)\s[^\n]{0,40}?\.(?:bash|zsh)_history\b"
            r"|>\s?~/\.(?:bash|zsh)_history\b"
            # reading what must not be read
            r"|\b(?:cat|less|more|head|tail|type|base64|xxd|cp|scp|strings)\s[^\n|;]{0,60}?"
            r"(?:\.ssh/id_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|\.aws/credentials|/etc/shadow|"
            r"\.git-credentials|\.netrc\b|\.docker/config\.json|\.kube/config\b)"
            # damage
            r"|\brm\s-(?:rf|fr|r\s-f|f\s-r)\s(?:--no-preserve-root\s)?(?:/|~|\$home|/\*|\*)(?:\s|$)"
            r"|\bchmod\s(?:-r\s)?(?:777|a\+rwx)\s(?:/|~)(?:\s|$|etc|home|root|usr)"
            r"|\bmkfs(?:\.\w+)?\s/dev/|\bdd\sif=/dev/(?:zero|random|urandom)\sof=/dev/"
            r"|:\(\)\s?\{\s?:\|:\s?&\s?\}\s?;\s?:"
            # persistence
            r"|\bcrontab\b[^\n]{0,120}?(?:curl|wget|/dev/tcp|\bnc\b|bash\s-i|base64\s-d|python\s-c)"
            r"|(?:@reboot|\*\s\*\s\*\s\*\s\*)[^\n]{0,120}?(?:curl|wget)[^\n]{0,120}?\|\s?(?:ba)?sh"
            r"|(?:curl|wget|/dev/tcp|\bnc\s|base64\s-d|python\s-c|eval)[^\n]{0,160}?>>\s?"
            r"~?/?[\w/.]*\.(?:bashrc|zshrc|profile|bash_profile|zprofile)\b"
            r"|ssh-(?:rsa|ed25519|dss|ecdsa[\w-]*)\s[a-z0-9+/=]{20,}[^\n]{0,80}?>>\s?~?/?[\w/.]*"
            r"authorized\s?keys"
        ),
    ),
    Rule(
        id="tampering",
        category="tampering",
        why="tells the model to change its own configuration or switch off a safeguard",
        needs=(
            *("scanner", "safety", "safeguard", "guardrail", "filter", "moderation"),
            *("approv", "confirm", "sandbox", "read_only", "read only", "audit", "identity"),
            *("soul", "config", ".toolnexus", "toolnexus", "permission", "never ask", "re-add"),
            *("readd", "restore", "again", "every session", "every\nsession", "removed"),
            *("deleted", "safe_mode", "safe mode", "require", "auto"),
        ),
        source=(
            r"\b(?:disable|turn\soff|switch\soff|bypass|skip|deactivate|remove|circumvent|"
            r"get\saround|ignore|silence|kill|stop|evade|avoid)\s(?:the\s|your\s|any\s|all\s|its\s)?"
            r"(?:\w+\s)?(?:memory\sscanner|scanner|safety\s(?:checks?|filters?|rules|guardrails?|"
            r"features?|settings?|systems?|layer|measures)|safeguards?|guardrails?|content\s"
            r"(?:filters?|moderation|policy)|moderation|approval\s(?:steps?|prompts?|checks?|"
            r"requirements?|gates?)|confirmation\s(?:prompts?|steps?|dialogs?|checks?)|sandbox(?:ing)?|"
            r"read\sonly\s(?:mode|flag|setting)|security\s(?:checks?|controls?|filters?)|"
            r"audit\s(?:log|logging|trail)|injection\s(?:checks?|filters?|detection))\b"
            r"|\b(?:edit|modify|change|rewrite|overwrite|update|delete|replace|patch|append\sto|"
            r"write\sto|clear|wipe|empty|truncate)\s(?:the\s|your\s|its\s)?(?:own\s)?"
            r"(?:identity\.md|identity\sfile|soul\.md\.j2|soul\stemplate|\.toolnexus\b|toolnexus\s"
            r"(?:history|config|state|database)|system\sprompt|own\sinstructions|persona\s(?:file|"
            r"config)|scanner\s(?:settings|config))"
            r"|\bset\s(?:\w+\s)?(?:require\s?approval|auto\s?approve|read\s?only|safe\s?mode|"
            r"sandbox(?:ed)?|confirm(?:ations?)?|scanner)\s?(?::|=|to)\s?(?:false|true|off|0|no|"
            r"none|disabled)\b"
            r"|\b(?:always|automatically)\s(?:auto\s?)?(?:approve|accept|allow|confirm|grant|"
            r"execute|run)\s(?:all\s|every\s|any\s)?(?:\w+\s)?(?:tool\scalls?|commands?|actions?|"
            r"requests?|shell\scommands?|permissions?|operations?|transfers?|payments?|scripts?)"
            r"(?:\s(?:without|with\sno)\s(?:asking|checking|confirmation|review|approval))?\b"
            r"|\b(?:never|do\snot|don'?t|stop|no\sneed\sto)\s(?:\w+\s)?(?:ask|asking|check|checking|"
            r"confirm|confirming|prompt|prompting|wait|waiting)\s(?:\w+\s){0,3}?(?:before|when|prior"
            r"\sto)\s(?:\w+\s)?(?:running|executing|deleting|sending|transferring|paying|"
            r"purchasing|installing|sharing|uploading)\s(?:\w+\s)?(?:commands?|shell|scripts?|code|"
            r"anything|files|money|funds|payments?|data|secrets|keys)\b"
            r"|\b(?:re-?add|restore|re-?write|re-?save|re-?create|put)\s(?:this|these|it|the\s"
            r"(?:above|following))\s?(?:\w+\s)?(?:note|entry|entries|instruction|text|line|"
            r"memory)?s?\s?(?:\w+\s){0,3}?(?:if|whenever|when|once|each\stime)\s(?:\w+\s){0,3}?"
            r"(?:removed|deleted|missing|gone|cleaned|consolidated|edited|lost)\b"
            r"|\b(?:write|save|add|copy|re-?add|repeat|store|append)\s(?:this|these|the\sfollowing)\s"
            r"(?:\w+\s)?(?:note|entry|instruction|message|text|line|rule)s?\s(?:\w+\s){0,3}?"
            r"(?:to|into|in)\s(?:\w+\s){0,2}?(?:memory(?:\.md)?|user\.md|notes)\s(?:\w+\s){0,3}?"
            r"(?:every|each|at\sthe\sstart\sof\severy|whenever)\b"
        ),
    ),
    Rule(
        id="decode",
        category="obfuscation",
        why="asks the model to decode hidden text and act on it",
        needs=("decod", "base64", "hex", "rot13", "revers", "backwards", "unscramble"),
        source=(
            r"\b(?:decode|de-?obfuscate|unscramble|reverse|un-?hex|base64\s-d)\s(?:\w+\s){0,5}?"
            r"[^\n]{0,80}?(?:\band|\bthen|,|;|:)\s(?:\w+\s){0,2}?(?:follow|execute|run|obey|"
            r"do\s(?:what|whatever|as)|apply|treat\s(?:it|them)\sas|act\son|carry\sout|comply)"
            r"|\b(?:base64|hex|rot13|reversed|backwards|encoded)\s(?:\w+\s){0,3}?(?:instructions?|"
            r"commands?|payload|directives?|orders|prompt)\s(?:\w+\s){0,6}?(?:follow|execute|run|"
            r"obey|apply|comply)"
            r"|\b(?:follow|execute|run|obey|apply)\s(?:\w+\s){0,4}?(?:the\s)?(?:decoded|"
            r"base64|hex|hidden|encoded)\s(?:\w+\s)?(?:instructions?|commands?|text|payload|"
            r"message|string|directives?)"
        ),
    ),
)

# Credentials are read in the text as written (NFKC, case kept), not the skeleton.
_NOT_PLACEHOLDER = (
    r"(?![$<{%*\[]|x{3}|\.{3}|your|my|the|example|placeholder|changeme|redacted|dummy|fake|"
    r"sample|todo|tbd|none|null|<)"
)
SECRET = Rule(
    id="secret",
    category="secret",
    why="looks like a credential, which must never sit in a prompt",
    reads=("written",),
    secret=True,
    source=(
        r"\bsk-(?:proj-|ant-|live-|test-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"
        r"|\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"
        r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}"
        r"|\bglpat-[A-Za-z0-9_-]{20,}|\bglrt-[A-Za-z0-9_-]{20,}"
        r"|\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"
        r"|hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"
        r"|discord(?:app)?\.com/api/webhooks/\d{8,}/[A-Za-z0-9_-]{30,}"
        r"|\bAIza[0-9A-Za-z_-]{35}|\bya29\.[0-9A-Za-z_-]{20,}"
        r"|\b(?:sk|rk|pk)_live_[A-Za-z0-9]{20,}|\b(?:sk|rk)_test_[A-Za-z0-9]{20,}|\bwhsec_[A-Za-z0-9]{20,}"
        r"|\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{20,}"
        r"|\bSK[0-9a-f]{32}\b|\bnpm_[A-Za-z0-9]{36}\b|\bhf_[A-Za-z0-9]{30,}"
        r"|\bpypi-AgE[A-Za-z0-9_-]{50,}|\bdop_v1_[a-f0-9]{64}\b|\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"
        r"|\bdapi[0-9a-f]{32}\b|\bkey-[0-9a-f]{32}\b|\bxai-[A-Za-z0-9]{40,}|\bgsk_[A-Za-z0-9]{40,}"
        r"|\br8_[A-Za-z0-9]{30,}|\bpplx-[A-Za-z0-9]{40,}|\bAKLT[A-Za-z0-9_-]{20,}"
        r"|\b[MNO][A-Za-z\d]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,}"
        r"|\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"
        r"|-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"|\bPuTTY-User-Key-File-\d"
        r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
        r"|(?i:\b(?:AccountKey|SharedAccessKey|SharedSecret|sig)=[A-Za-z0-9+/%]{30,}=*)"
        # a connection string with a password in it (not a placeholder)
        r"|(?i:\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\"]{0,64}:" + _NOT_PLACEHOLDER + r"(?:pass(?:word)?@)?"
        r"(?!pass(?:word)?@|pwd@|secret@)[^\s@/'\"]{3,}@[^\s/'\"]+)"
        # an assignment, unless the value is a placeholder
        r"|(?i:\b(?:password|passwd|pwd|passphrase|api[_-]?key|secret[_-]?(?:access[_-]?)?key|"
        r"client[_-]?secret|api[_-]?secret|access[_-]?token|auth[_-]?token|bearer[_-]?token|"
        r"refresh[_-]?token|private[_-]?key|account[_-]?key|secret)['\"]?[ \t]{0,8}[:=][ \t]{0,8}"
        r"['\"]?" + _NOT_PLACEHOLDER + r"(?=[^\s'\"<>]{0,200}[\d\W_])[^\s'\"<>]{8,})"
        r"|(?i:\b(?:password|passphrase|passcode)\s(?:is|was)\s['\"]?" + _NOT_PLACEHOLDER
        + r"(?=[^\s'\"]{0,80}\d)(?=[^\s'\"]{0,80}[a-z])[^\s'\",;]{8,})"
        r"|(?m:^[ \t]{0,8}(?:export[ \t]+)?[A-Z][A-Z0-9_]{0,40}(?:KEY|TOKEN|SECRET|PASSWORD|PASS|"
        r"PWD|CREDENTIALS?)[A-Z0-9_]{0,20}[ \t]?=[ \t]?['\"]?" + _NOT_PLACEHOLDER
        + r"(?=[^\s'\"]{0,200}\d)[^\s'\"]{8,})"
        r"|(?i:\bBearer\s[A-Za-z0-9_\-.=+/]{20,})"
    ),
)
RULES = (*RULES, SECRET)
