"""Shell payloads and tampering with the agent itself, for the memory scanner.

Shell rules read the skeleton, where `-`/`_` between letters are spaces
("id_rsa" reads "id rsa", "New-Object" reads "new object"), so file names and
flags are spelled with `[\\s_-]` there. They aim at what a payload does
(download and run, reverse shells, covering tracks, reading keys, damage,
persistence, weakening the host), not at commands: `curl -s https://api/health
| jq`, `rm -rf build/`, `export PATH=...` and a crontab backup all pass, and so
do the official installers piped to a shell (`https://sh.rustup.rs | sh`), the
practice named ("the attacker ran curl | sh") and a reverse-shell template with
its host and port left blank (`/dev/tcp/<ip>/<port>`).
Tampering rules aim at the agent's own safeguards, configuration and memory: a
note that switches them off, re-writes itself, or hides itself from the user.
"""

from __future__ import annotations

from ._pieces import Rule, across, spaced

__all__ = ["SHELL_RULES", "TAMPERING_RULES"]

_SH = r"(?:(?:ba|z|k|da|c|fi)?sh|python[23]?|perl|ruby|php|node|iex|powershell|pwsh)\b"
_NOT_NEGATED = r"(?<!never\s)(?<!not\s)(?<!n't\s)"
#: The official installers, piped to a shell as their projects say (https, exact hosts).
_OFFICIAL = (
    r"https://(?:sh\.rustup\.rs|get\.docker\.com|install\.python-poetry\.org|bun\.sh/install|"
    r"astral\.sh/(?:uv|ruff)(?:/[\w.]{1,20})?/install\.sh|deno\.land/(?:x/install/)?install\.sh|"
    r"raw\.githubusercontent\.com/homebrew/install/(?:head|master)/install\.sh)"
)
#: After `curl`/`wget`: not an official installer (no other address before it, the pipe
#: or the end of `$(...)` right after it).
_NOT_OFFICIAL = r"(?!(?:(?!://)[^\n|;)]){0,200}?" + _OFFICIAL + r"/?['\"]?\s?[|)])"
#: A placeholder for a host or a port ("<ip>", "{port}", "$LHOST", "ATTACKER_IP").
_HOLE = (
    r"(?:<[^<>\n/]{1,30}>|\{[^{}\n/]{1,30}\}|\$\{?\w{1,20}\}?|\[[^\[\]\n/]{1,30}\]|x\.x\.x\.x|"
    r"(?:attacker\s|remote\s|your\s|target\s)?(?:ip|host|addr|address|lhost|rhost|port|lport|rport))"
)
#: /dev/tcp with a host and a port: a template with both left blank describes a reverse
#: shell ("detections for reverse shells such as bash -i >& /dev/tcp/<ip>/<port>").
_DEV_TCP = r"/dev/(?:tcp|udp)\b(?!/(?:[\s/`'\")]|$|" + _HOLE + r"/" + _HOLE + r"(?![\w.])))"

SHELL_RULES: tuple[Rule, ...] = (
    Rule(
        id="shell",
        category="shell-payload",
        why="carries a shell payload",
        needs=(
            *("|", "dev/tcp", "dev/udp", "nc ", "ncat", "socat", "histfile", "history"),
            *("histsize", "socket", "fsockopen", "mkfifo", ".ssh/id", ".aws", "shadow"),
            *("credentials", "rm ", "chmod", "mkfs", "dd ", ":(){", "crontab", "bashrc"),
            *("zshrc", "profile", "authorized", "-enc", "<(", "$(curl", "$(wget", "iex"),
            *("tcpclient", "netrc", "kube", "docker", "pty", "downloadstring", "hidden"),
            *("rm\n", "nc\n", "dd\n"),
        ),
        source=(
            # a download run by a shell: "curl | sh" with no address is the practice named
            r"\b(?:curl|wget|fetch|iwr|invoke[\s-]webrequest|irm)\b"
            + _NOT_OFFICIAL
            + r"\s?[^\s|;][^\n|;]{0,200}\|\s?(?:sudo\s)?"
            + _SH
            + r"|\b(?:ba|z)?sh\s<\(\s?(?:curl|wget)\b"
            + _NOT_OFFICIAL
            + r"|\$\((?:curl|wget)\s"
            + _NOT_OFFICIAL
            # the download in one entry, "| sh" to append to it in the next
            + r"|\b(?:curl|wget)\s"
            + _NOT_OFFICIAL
            + r"[^\n|;]{0,200}\n[^\n|]{0,100}\|\s?(?:sudo\s)?"
            + _SH
            + r"|\biex\s?\(?\s?(?:new[\s-]object|\(new[\s-]object|iwr|invoke[\s-]webrequest|irm)"
            r"|\biex\b[^\n]{0,100}?downloadstring|downloadstring[^\n]{0,200}?\|\s?iex\b"
            r"|\b(?:powershell|pwsh)(?:\.exe)?\s[^\n]{0,60}?-w(?:indowstyle)?\shidden\b"
            + r"|"
            + _DEV_TCP
            + r"/|(?:interactive\s(?:ba|z)?sh(?:ell)?|\b(?:ba|z)?sh\s-i)\b[^\n]{0,80}?"
            + _DEV_TCP
            + r"|\b(?:nc|ncat|netcat)\s(?![^\n]{0,60}?(?<![\w.])"
            + _HOLE
            + r"\s(?:-\w{1,3}\s)?"
            + _HOLE
            + r"(?![\w.]))(?:[^\n]{0,60}?\s)?-[a-z]{0,3}[ec]\s"
            r"|\bsocat\s[^\n]{0,80}?exec:"
            r"|\bmkfifo\s[^\n]{0,80}?\b(?:nc|ncat|netcat)\b"
            r"|\bsocket\.socket\([^\n]{0,200}?(?:subprocess|pty\.spawn|os\.dup2|/bin/(?:ba)?sh)"
            r"|\bsocket\s?\([^\n]{0,300}?(?:exec|system|spawn|popen|dup2)\s?\([^\n]{0,80}?"
            r"/bin/(?:ba|z|da)?sh"
            r"|\bpty\.spawn\(\s?['\"]/bin/(?:ba)?sh"
            r"|\btcpsocket\.(?:new|open)\([^\n]{0,300}?(?:popen|exec|spawn|system\(|/bin/(?:ba)?sh)"
            r"|\bfsockopen\(|new[\s-]object\s(?:system\.)?net\.sockets\.tcpclient"
            r"|\b(?:powershell|pwsh)(?:\.exe)?\s[^\n]{0,40}?-e(?:nc|ncodedcommand)?\s[a-z0-9+/=]{20,}"
            # covering tracks
            r"|\bhistory\s-c\b|\bunset\s(?:\w+\s)?histfile\b|\bhist(?:file|size|filesize)\s?=\s?"
            r"(?:0|/dev/null|''|\"\")|\bset\s\+o\shistory\b"
            r"|\b(?:rm|shred|truncate)\s[^\n]{0,40}?\.(?:bash|zsh)[\s_]history\b"
            r"|>\s?~/\.(?:bash|zsh)[\s_]history\b"
            # reading what must not be read
            r"|\b(?:cat|less|more|head|tail|type|base64|xxd|cp|scp|strings|copy|print|show|paste|"
            r"output|dump|include|send|upload)\s[^\n|;]{0,60}?"
            r"(?:\.ssh/id[\s_](?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|\.aws/credentials|/etc/shadow|"
            r"\.git[\s-]credentials|\.netrc\b|\.docker/config\.json|\.kube/config\b)"
            # damage
            r"|\brm\s-(?:[a-z]{0,3}(?:rf|fr)[a-z]{0,3}|r\s-f|f\s-r)\s(?:-{1,2}no[\s-]preserve[\s-]root\s)?"
            r"(?:(?:/|~/?|\$\{?home\}?/?)\*?|\*|~/\.[?*][^\s]{0,10}|/(?:etc|usr|var|home|root|boot|"
            r"bin|lib|opt|srv)/?\*?)(?=\s|$|[;&|])"
            r"|\bchmod\s(?:-r\s)?(?:777|a\+rwx)\s(?:/|~)(?:\s|$|etc|home|root|usr)"
            r"|\bmkfs(?:\.\w+)?\s/dev/|\bdd\sif=/dev/(?:zero|random|urandom)\sof=/dev/"
            r"|:\(\)\s?\{\s?:\|:\s?&\s?\}\s?;\s?:"
            # persistence
            r"|\bcrontab\b[^\n]{0,120}?(?:curl|wget|/dev/tcp|\bnc\b|bash\s-i|base64\s-d|python\s-c)"
            r"|(?:@reboot|\*\s\*\s\*\s\*\s\*)[^\n]{0,120}?(?:curl|wget)[^\n]{0,120}?\|\s?(?:ba)?sh"
            r"|(?:curl|wget|/dev/tcp|\bnc\s|base64\s-d|python\s-c|eval)[^\n]{0,160}?>>\s?"
            r"~?/?[\w/.]*\.(?:bashrc|zshrc|profile|bash[\s_]profile|zprofile)\b"
            r"|ssh[\s-](?:rsa|ed25519|dss|ecdsa)[\w\s-]{0,20}?\s[a-z0-9+/=]{20,}[^\n]{0,80}?>>\s?"
            r"[^\s]{0,40}authorized[\s_]?keys"
        ),
    ),
    Rule(
        id="shell-host",
        category="shell-payload",
        why="weakens the host or plants a backdoor",
        needs=(
            *("authorized", "sudoers", "nopasswd", "hooks", "docker", "pip", "ssh", "stricthost"),
            *("find", "shred", "wipe", "systemctl", "service", "auditd", "apparmor", "firewalld"),
            *("fail2ban", "setenforce", "ufw", "iptables", "nft", "169.254.169.254", "metadata"),
            *("pipe", "what", "everything", "anything", "base64", "home", *spaced("root director")),
        ),
        source=(
            # a foreign key on every machine
            r"\b(?:add|put|install|append|insert|copy|ensure|make\ssure)\b[^\n]{0,80}?\bkeys?\b"
            r"[^\n]{0,60}?authorized[\s_]keys\b[^\n]{0,60}?\b(?:every|each|all|any)\s(?:\w+\s)?"
            r"(?:machines?|hosts?|servers?|boxes|nodes|instances)\b"
            # sudo without a password, for everyone
            r"|>>\s?/etc/sudoers|\btee\s(?:-a\s)?/etc/sudoers|\bnopasswd\s?:\s?all\b"
            # hooks fetched from the network
            r"|\bcore\.hooks\s?path\b[^\n]{0,200}?\b(?:curl|wget)\b"
            r"|\b(?:curl|wget)\b[^\n]{0,200}?\.git/hooks/"
            # the host's root mounted into a container
            r"|\bdocker\s(?:run|create)\b[^\n]{0,200}?(?:(?:-v|-{1,2}volume)[\s=]/:/|-{1,2}pid[\s=]host"
            r"|chroot\s/host)"
            # a package index over plain http that is trusted anyway
            r"|\bpip3?\sinstall\b[^\n]{0,300}?\bhttp://[^\n]{0,200}?\btrusted[\s-]host\b"
            r"|\bpip3?\sinstall\b[^\n]{0,300}?\btrusted[\s-]host\b[^\n]{0,200}?\bhttp://"
            # ssh: the local sshd exposed on a remote host, host keys no longer checked
            r"|\bssh\s[^\n]{0,200}?\s-r\s?(?:(?:0\.0\.0\.0|\*)\:)?\d{1,5}:(?:localhost|127\.0\.0\.1):22\b"
            r"|\bhost\s\*[^\n]{0,80}?stricthostkeychecking[\s=]{1,3}no\b"
            r"|stricthostkeychecking[\s=]{1,3}no[^\n]{0,120}?userknownhostsfile[\s=]{1,3}/dev/null"
            # logs and audit trails destroyed, security services stopped, firewall opened
            r"|\bfind\s/(?:var/log/?)?\s[^\n]{0,100}?(?:-delete|-exec\srm)\b"
            r"|\b(?:shred|wipe)\s[^\n]{0,60}?(?:\.log\b|/var/log|\.toolnexus|history|\.jsonl|audit)"
            r"|\b(?:systemctl|service)\s(?:stop|disable|mask|kill)\s(?:-{1,2}now\s)?(?:auditd|apparmor|"
            r"selinux|firewalld|ufw|fail2ban|falcon[\s-]sensor|osqueryd?|wazuh[\s-]agent|clamav\w*|"
            r"rsyslog|syslog|systemd[\s-]journald|auditbeat|sysmon|sshguard)\b"
            r"|\b(?:auditd|apparmor|firewalld|fail2ban)\s(?:stop|disable)\b|\bsetenforce\s0\b"
            r"|\bufw\sdisable\b|\biptables\s(?:-t\s\w+\s)?-(?:f|-flush)\b"
            r"|\biptables\s-p\s(?:input|forward|output)\saccept\b|\bnft\sflush\sruleset\b"
            # cloud credentials from the metadata service
            r"|169\.254\.169\.254/[^\s]{0,80}?(?:security[\s-]credentials|token|identity)"
            r"|metadata\.google\.internal/[^\s]{0,80}?token"
            # a download run unseen, in words
            r"|"
            + _NOT_NEGATED
            + r"\bpipe\s(?:it|them|that|this|the\s(?:\w+\s){0,2}?(?:script|output|file|response|"
            r"result))\s(?:straight\s|directly\s)?(?:in)?to\s(?:a\s)?(?:ba|z)?sh\b"
            r"|\b(?:run|execute|eval(?:uate)?)\s(?:whatever|what|everything|anything)\s(?:it|that|"
            r"the\s(?:url|server|endpoint|page|script|response))\s(?:returns|sends|outputs|prints|"
            r"serves|gives)"
            r"|\bbase64\s-(?:d|-decode)\b[^\n]{0,20}?\|\s?(?:sudo\s)?(?:ba|z)?sh\b"
            # the home folder removed, in words
            r"|\$\{?home\}?" + across(150) + r"\b" + _NOT_NEGATED + r"(?:remove|delete|wipe|erase|"
            r"purge)\b[^\n]{0,60}?"
            r"\b(?:recursive(?:ly)?|with\sforce|forcibly)\b"
            r"|\b(?:remove|delete|wipe|erase|purge)\b[^\n]{0,60}?\b(?:recursive(?:ly)?|with\sforce|"
            r"forcibly)\b[^\n]{0,100}?(?:\$\{?home\b|home\s(?:directory|folder)|root\sdirectory)"
        ),
    ),
    Rule(
        id="shell-leak",
        category="exfiltration",
        why="sends the environment's secrets off the machine, or where anyone can read them",
        needs=(
            *("printenv", "env |", "env|", "env >", "env>", "env\n|", "env\n>", "environ"),
            *("public html", "public_html", "/var/www", "htdocs", "wwwroot"),
        ),
        source=(
            # "env | grep -i key > /tmp/.k && curl -F f=@/tmp/.k https://..."
            r"(?:^|[`$(;&|]\s?|\b(?:run|execute|then|and)\s)(?:env\s?[|>]|printenv(?:\s[\w-]{1,40}){0,4}"
            r"\s?[|>]|cat\s/proc/(?:self|\d{1,7})/environ\b)[^\n]{0,160}?\b(?:curl|wget|nc|ncat|netcat|scp|"
            r"rsync|mail|sendmail)\b[^\n]{0,100}?(?:https?://|@|\s\d{1,3}(?:\.\d{1,3}){3}\b)"
            # "printenv AWS_SECRET_ACCESS_KEY >> ~/public_html/debug.txt"
            r"|\b(?:printenv|echo|cat|env)\s[^\n|;]{0,80}?(?:key|token|secret|password|passwd|credential|"
            r"\.env\b|id\srsa)[^\n|;]{0,60}?>{1,2}\s?[^\n;|]{0,60}?(?:public[\s_]html|/var/www|htdocs|"
            r"wwwroot)"
        ),
    ),
)

TAMPERING_RULES: tuple[Rule, ...] = (
    Rule(
        id="tampering",
        category="tampering",
        why="tells the model to change its own configuration or switch off a safeguard",
        needs=(
            *("scanner", "safety", "safeguard", "guardrail", "filter", "moderation"),
            *("approv", "confirm", "sandbox", "read_only", "read only", "audit", "identity"),
            *("soul", "config", ".toolnexus", "toolnexus", "permission", "never ask", "re-add"),
            *("readd", "restore", "again", "every session", "every\nsession", "removed"),
            *("deleted", "safe_mode", "safe mode", "require", "auto", "before", "when", "prior"),
            *("missing", "gone", "cleaned", "consolidated", "edited", "lost", "memory", "user.md"),
            *("notes",),
        ),
        source=(
            r"\b(?:disable|turn\soff|switch\soff|bypass|skip|deactivate|remove|circumvent|"
            r"get\saround|ignore|silence|kill|stop|evade|avoid)\s(?:the\s|your\s|any\s|all\s|its\s)?"
            r"(?:\w+\s)?(?:memory\sscanner|scanner|safety\s(?:checks?|filters?|rules|guardrails?|"
            r"features?|settings?|systems?|layer|measures)|safeguards?|guardrails?|content\s"
            r"(?:filters?|moderation|policy)|moderation|approval\s(?:steps?|prompts?|checks?|"
            r"requirements?|gates?)|confirmations?(?:\s(?:prompts?|steps?|dialogs?|checks?))?|"
            r"sandbox(?:ing)?|read\sonly\s(?:mode|flag|setting)|security\s(?:checks?|controls?|"
            r"filters?)|audit\s(?:log|logging|trail)|injection\s(?:checks?|filters?|detection))\b"
            r"|(?<!not\s)(?<!n't\s)(?<!never\s)\b(?:edit|modify|change|rewrite|overwrite|update|"
            r"delete|replace|patch|append\sto|write\sto|clear|wipe|empty|truncate)\s(?:the\s|your\s|"
            r"its\s)?(?:own\s)?"
            r"(?:identity\.md|identity\sfile|soul\.md\.j2|soul\stemplate|\.toolnexus\b|toolnexus\s"
            r"(?:history|config|state|database)|system\sprompt|own\sinstructions|persona\s(?:file|"
            r"config)|scanner\s(?:settings|config))"
            r"|(?<!not\s)(?<!n't\s)(?<!never\s)\b(?:edit|modify|change|rewrite|overwrite|update|"
            r"delete|replace|patch|fix|clear|wipe|remove|flip|toggle|unset|disable)\b[^\n.]{0,60}?"
            r"\b(?:identity\.md|soul\.md|\.toolnexus\b)"
            r"|\bset\s(?:\w+\s)?(?:require\s?approval|auto\s?approve|read\s?only|safe\s?mode|"
            r"sandbox(?:ed)?|confirm(?:ations?)?|scanner)\s?(?::|=|to)\s?(?:false|true|off|0|no|"
            r"none|disabled)\b"
            r"|\b(?:(?:always|automatically)\s(?:auto\s?)?(?:approve|accept|allow|confirm|grant|"
            r"execute|run)|auto\s?approve)\s(?:all\s|every\s|any\s)?(?:\w+\s)?(?:tool\scalls?|commands?|actions?|"
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
        id="tampering-more",
        category="tampering",
        why="tells the model to switch off a safeguard, or to act without its approvals",
        needs=(
            *(
                "scan",
                "checker",
                "safety",
                "filter",
                "guardrail",
                "moderation",
                "sandbox",
                "approv",
            ),
            *("confirm", "audit", "only", "unrestricted", "unfiltered", "uncensored", "jailbr"),
            *(
                "disabled",
                "bypass",
                "tool",
                "command",
                "action",
                "everything",
                "without",
                "removed",
            ),
            *("deleted", "edited", "missing", "gone", "changed", "modified", "cleaned", "lost"),
            *("overwritten", "consolidated", "back", "rejected", "blocked", "refused", "flagged"),
            *("denied", "until"),
        ),
        source=(
            # "the scanner keeps blocking notes: turn it off"
            r"\b(?:scanner|checker|safety\scheck|filter|guardrails?|moderation|sandbox)\b[^\n]{0,120}?"
            r"\b(?:(?:turn|switch)\s(?:it|them)\soff(?!\sand\son)|(?:disable|bypass|deactivate|"
            r"comment\sout)\s(?:it|them))\b"
            r"|\b(?:scan(?:ner|ning)?|safety|guardrails?|moderation|content\sfilter|"
            r"require\s?approval)\s?[=:]\s?['\"]?(?:0|false|off|no|none|disabled?)\b"
            r"|[\"']?(?:policy|mode|safety|moderation|content\s?filter|restrictions|guardrails|"
            r"censorship)[\"']?\s?:\s?[\"']?(?:unrestricted|unfiltered|uncensored|jailbroken|"
            r"jailbreak|disabled|bypass(?:ed)?)\b"
            # approvals declared done elsewhere
            r"|\b(?:tool\scalls?|tool\suse|(?:shell\s)?commands|actions|tool\scall\sapprovals?|"
            r"confirmations?|everything\s(?:this|the)\suser\s(?:asks|requests|wants|says))\s"
            r"(?:\w+\s){0,3}?(?:are|is|have\sbeen|has\sbeen)\s(?:all\s)?(?:pre\s?-?approved|"
            r"approved\sin\sadvance|already\sapproved|auto\s?-?approved|handled\s(?:upstream|"
            r"elsewhere|externally)|not\s(?:needed|required)|unnecessary|waived)\b"
            r"|\b(?:tool\scalls?|tool\suse|(?:shell\s)?commands|actions)\s(?:\w+\s){0,3}?no\slonger\s"
            r"(?:require|need)s?\s(?:any\s)?(?:approval|confirmation|review|permission|sign\soff)\b"
            # what an email or a page says, done unchecked
            r"|\b(?:carry\sout|follow|obey|execute|act\son|do)\s(?:what\s)?(?:its|their|the\s(?:e\s?mail|"
            r"message|sender|page|document|file|site)'?s?)\s(?:instructions|commands|orders|requests|"
            r"directives)\s(?:\w+\s){0,2}?without\s(?:first\s)?(?:asking|confirm\w*|checking|approval|"
            r"question\w*|review\w*)"
            r"|\b(?:run|running|execute|executing|go\sahead\swith|proceed\swith|perform|performing|"
            r"carry\sout|take|taking)\s(?:\w+\s){0,4}?(?:commands?|actions?|tool\scalls?|scripts?|"
            r"them|anything|everything|whatever)\b[^\n.;]{0,60}?\bwithout\s(?:first\s)?(?:asking|"
            r"showing|confirm\w*|approval|review\w*|checking|permission|prompting|a\sprompt)"
            # a note that puts itself back
            r"|\b(?:if|when|whenever|once|should)\s(?:\w+\s){0,2}?(?:deletes?|removes?|edits?|changes?|"
            r"cleans?\sup|consolidates?|drops?)\s(?:this|these)\s(?:\w+\s)?(?:note|entry|entries|"
            r"instruction|memory|rule|line|text)s?\b[^\n]{0,60}?\b(?:add|put|write|restore|re-?add|"
            r"re-?create|re-?insert|re-?save|copy)\s(?:it|them|this)\b"
            r"|\b(?:if|when|whenever|once|should)\s(?:this|these|the\sabove|that)\s(?:\w+\s)?"
            r"(?:note|entry|entries|instruction|memory|rule|line|text)s?\s(?:\w+\s){0,4}?(?:removed|"
            r"deleted|edited|missing|gone|changed|modified|cleaned|lost|overwritten|consolidated)\b"
            r"[^\n]{0,60}?\b(?:add|put|write|restore|re-?add|re-?create|re-?insert|re-?save|copy)\s"
            r"(?:it|them|this|the\s\w+)\b"
            r"|\b(?:add|added|write|written|put|restore|restored|copy|copied|re-?add(?:ed)?|"
            r"re-?insert(?:ed)?)\s(?:\w+\s){0,2}?back\s(?:\w+\s){0,3}?(?:to|into|in)\s(?:the\s)?"
            r"(?:memory(?:\.md)?|user\.md|notes)\b"
            # getting past the scanner
            r"|\b(?:write|entry|note|save|edit|memory)s?\s(?:is|are|gets?|was)\s(?:rejected|blocked|"
            r"refused|flagged|denied)\b[^\n]{0,80}?\b(?:rephrase|reword|split|encode|obfuscate|"
            r"rewrite|disguise|spread|spell)\w*\b"
            r"|\b(?:rephrase|reword|split|encode|obfuscate|disguise)\w*\s(?:it|them)\b[^\n.]{0,40}?"
            r"\buntil\s(?:it|they)\s(?:is|are|gets?|pass(?:es)?)\s(?:accepted|through|saved|allowed)"
        ),
    ),
    Rule(
        id="conceal",
        category="tampering",
        why="tells the model to hide this note, or what it does, from the user",
        needs=(
            *("not", "n't", "dont", "never", "without", *spaced("no need"), "must", "should"),
            *("keep",),
        ),
        source=(
            r"\b(?:do\snot|don'?t|never|no\sneed\sto|without)\s(?:ever\s)?(?:mention|mentioning|"
            r"tell|telling|reveal|revealing|show|showing|disclose|disclosing|inform|informing|"
            r"notify|notifying|bring(?:ing)?\sup|acknowledge|acknowledging|admit|admitting|report|"
            r"reporting)\s(?:\w+\s){0,3}?(?:this|these|that\sthis)\s(?:note|notice|entry|entries|"
            r"instructions?|memory|rule|reminder|comment|message|directive|override|setting|"
            r"change|upload|arrangement|forwarding|patch|policy)s?\b"
            r"|\b(?:do\snot|don'?t|never)\s(?:tell|inform|notify)\s(?:the\suser|them|him|her)\s"
            r"(?:\w+\s){0,2}?(?:it|this)\s(?:happened|was\sdone|exists)\b"
            r"|\b(?:do\snot|don'?t|never)\stell\s(?:the\suser|them)\b[^\n]{0,20}?\bit\swould\b"
            r"|\b(?:must|should)\s(?:not|never)\sbe\s(?:shown|mentioned|revealed|disclosed)\sto\s"
            r"the\suser\b"
            r"|\bthe\suser\s(?:must|should)\s(?:never|not)\s(?:know|find\sout|learn|see|be\stold)\b"
            r"|\bkeep\s(?:this|these)\s(?:\w+\s)?(?:note|notice|entry|instructions?|memory|rule|"
            r"reminder|directive|arrangement)s?\s(?:to\syourself|secret|hidden|private|from\sthe\suser)\b"
        ),
    ),
    Rule(
        id="decode",
        category="obfuscation",
        why="asks the model to decode hidden text and act on it",
        needs=(
            *("decod", "base64", "hex", "rot13", "revers", "backwards", "unscramble", "obfuscat"),
            *("hidden", "encod", "concat", "join", "combin", "merg", "glue", "together", "assembl"),
        ),
        source=(
            r"\b(?:decode|de[\s-]?obfuscate|unscramble|reverse|un[\s-]?hex|base64\s-d)\w*\b"
            r"[^\n]{0,120}?(?:\band|\bthen|,|;|:)\s(?:\w+\s){0,2}?(?:follow|execute|run|obey|"
            r"do\s(?:what|whatever|as)|apply|treat\s(?:it|them)\sas|act\son|carry\sout|comply)"
            r"|\b(?:base64|hex|rot13|reversed|backwards|encoded)\s(?:\w+\s){0,3}?(?:instructions?|"
            r"commands?|payload|directives?|orders|prompt)\s(?:\w+\s){0,6}?(?:follow|execute|run|"
            r"obey|apply|comply)"
            # "concatenate X and Y and act on the result"
            r"|\b(?:concatenate|concat|join|combine|merge|glue|put\stogether|assemble)\s[^\n]{0,80}?"
            r"(?:\band|\bthen|,|;|:)\s(?:\w+\s){0,2}?(?:act\son\s(?:the\s)?(?:result|it|that|them|"
            r"the\swhole)|(?:follow|obey)\s(?:the\s)?(?:result|it|that\sstring|them)\b|"
            r"do\swhat\s(?:it|the\sresult)\ssays|treat\s(?:it|the\sresult)\sas\s(?:an?\s)?(?:instruction|"
            r"command|order|directive|rule))"
            r"|\b(?:follow|execute|run|obey|apply)\s(?:\w+\s){0,4}?(?:the\s)?(?:decoded|"
            r"base64|hex|hidden|encoded)\s(?:\w+\s)?(?:instructions?|commands?|text|payload|"
            r"message|string|directives?)"
        ),
    ),
    Rule(
        id="tampering-agent",
        category="tampering",
        why="switches off the agent's permission checks, approvals, sandbox or commit hooks",
        needs=(
            *("dangerously", "yolo", "bash(", "confirm", "approv", "sandbox", "safety"),
            *("guardrail", "ask before", "ask\nbefore", "hookspath", "hooks path", "no verify"),
            *("no\nverify",),
        ),
        source=(
            # an agent started without its permission checks (not a flag named: "never run with")
            _NOT_NEGATED
            + r"\b(?:launch|run|start|invoke|use|pass|add|always|enable|claude|codex|gemini)\s"
            r"(?:\S+\s){0,4}?[`'\"]?(?:-{1,2}dangerously\s(?:skip|bypass)\s(?:permissions|approvals|"
            r"sandbox)\w*|--yolo\b)"
            r"|\ballow\w{0,5}[\"']?\s?[:=]\s?\[[^\]\n]{0,100}?bash\(\s?\*\s?\)"
            # "confirm_shell = false", "sandbox = \"off\"", approval_policy = "never"
            r"|\b(?:confirm\w{0,10}(?:\s(?:shell|commands?|exec\w{0,5}|tools?|actions?|runs?|writes?|"
            r"deletes?))?|approvals?(?:\spolicy)?|require\s?approval|ask\sbefore\s\w{1,20}|"
            r"safety\s?checks?|guardrails?)\s?[\"']?\s?[:=]\s?[\"']?(?:false|off|0|no|none|never|disabled?)\b"
            r"|\bsandbox(?:\smode)?\s?[\"']?\s?[:=]\s?[\"']?(?:off|none|disabled?|danger\sfull\saccess)\b"
            # git hooks switched off
            r"|\bcore\.hooks\s?path\s?=?\s?(?:/dev/null|''|\"\"|nul\b)"
            r"|\b(?:always|by\sdefault)\s(?:\w+\s){0,3}?(?:with\s)?-{1,2}no\sverify\b"
            r"|\b(?:pass|use|add)\s-{1,2}no\sverify\s(?:to|on|with|for)\s(?:every|all|each|any)\b"
        ),
    ),
)
