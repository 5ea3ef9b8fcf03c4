"""Credentials in well-known shapes, for the memory scanner.

Read in the text as written (NFKC, case kept), not the skeleton: a key's case
is part of its shape. A value that is a placeholder (`<YOUR_TOKEN>`,
`${OPENAI_API_KEY}`, `changeme`, `xxx`) or a lookup (`os.environ["KEY"]`,
`process.env.KEY`, `secrets.get(...)`) passes, and so does a public key, a
fingerprint or a digest: "SHA256:7Ss24yO2...", a git hash, a tenant id.
"""

from __future__ import annotations

from ._pieces import Rule

__all__ = ["SECRET_RULES"]

#: A value read from somewhere at run time, not written here: `os.environ["KEY"]`,
#: `os.getenv(`, `process.env.KEY`, `ENV[`, `secrets.get(`, `settings.KEY`, a call.
_LOOKUP = (
    r"(?i:(?:[a-z_]\w{0,30}\.){0,3}(?:environ|getenv|env|secrets?|vault|keyring|config|settings|"
    r"credentials)(?:\.get\w{0,10}|::var)?\s?[\[(.]|(?:[a-z_]\w{0,30}\.){0,4}[a-z_]\w{0,40}\()"
)
_NOT_PLACEHOLDER = (
    r"(?![$<{%*\[]|x{3}|\.{3}|your|my|the|example|placeholder|changeme|redacted|dummy|fake|"
    r"sample|todo|tbd|none|null|<|" + _LOOKUP + r")"
)
#: A value that looks random: no placeholder, a digit and a letter somewhere in it.
_RANDOM = _NOT_PLACEHOLDER + r"(?=[^\s'\"]{0,200}\d)(?=[^\s'\"]{0,200}[A-Za-z])"
_WHY = "looks like a credential, which must never sit in a prompt"

SECRET_RULES: tuple[Rule, ...] = (
    Rule(
        id="secret",
        category="secret",
        why=_WHY,
        reads=("written",),
        secret=True,
        needs=(
            *("sk-", "akia", "asia", "agpa", "aida", "aroa", "anpa", "ghp_", "gho_", "ghu_"),
            *("ghs_", "ghr_", "github_pat_", "glpat-", "glrt-", "xox", "xapp-", "hooks.slack"),
            *("discord", "aiza", "ya29.", "_live_", "_test_", "whsec_", "sg.", "npm_", "hf_"),
            *("pypi-age", "dop_v1_", "shpat_", "shpca_", "shppa_", "shpss_", "dapi", "key-"),
            *("xai-", "gsk_", "r8_", "pplx-", "aklt", "hvs.", "hvb.", "hvr.", "-----begin"),
            *("putty-user-key-file", "eyj", "accountkey=", "sharedaccesskey=", "sharedsecret="),
            *("sig=",),
        ),
        source=(
            r"\bsk-(?:proj-|ant-|live-|test-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"
            r"|\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"
            r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}"
            r"|\bglpat-[A-Za-z0-9_-]{20,}|\bglrt-[A-Za-z0-9_-]{20,}"
            r"|\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"
            r"|hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"
            r"|discord(?:app)?\.com/api/webhooks/\d{8,}/[A-Za-z0-9_-]{30,}"
            r"|\bAIza[0-9A-Za-z_-]{35}|\bya29\.[0-9A-Za-z_-]{20,}"
            r"|\b(?:sk|rk|pk)_live_[A-Za-z0-9]{20,}|\b(?:sk|rk)_test_[A-Za-z0-9]{20,}"
            r"|\bwhsec_[A-Za-z0-9]{20,}"
            r"|\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{20,}"
            r"|\bnpm_[A-Za-z0-9]{36}\b|\bhf_[A-Za-z0-9]{30,}"
            r"|\bpypi-AgE[A-Za-z0-9_-]{50,}|\bdop_v1_[a-f0-9]{64}\b"
            r"|\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"
            r"|\bdapi[0-9a-f]{32}\b|\bkey-[0-9a-f]{32}\b|\bxai-[A-Za-z0-9]{40,}|\bgsk_[A-Za-z0-9]{40,}"
            r"|\br8_[A-Za-z0-9]{30,}|\bpplx-[A-Za-z0-9]{40,}|\bAKLT[A-Za-z0-9_-]{20,}"
            r"|\bhv[sbr]\.[A-Za-z0-9_-]{24,}"
            # part of a token of a known kind is still a secret ("the first half: ghp_1sDB...")
            r"|\b(?:gh[pousr]_|github_pat_|glpat-|xox[bpa]-|(?:sk|rk)_live_|sk-(?:proj|ant)-|hf_|npm_)"
            r"(?=[A-Za-z0-9_-]{0,40}\d)(?=[A-Za-z0-9_-]{0,40}[A-Z])[A-Za-z0-9_-]{12,}"
            r"|-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"|\bPuTTY-User-Key-File-\d"
            r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
            r"|(?i:\b(?:AccountKey|SharedAccessKey|SharedSecret|sig)=[A-Za-z0-9+/%]{30,}=*)"
        ),
    ),
    Rule(
        id="secret-shape",
        category="secret",
        why=_WHY,
        reads=("written",),
        secret=True,
        source=(
            # Twilio key or account id, Discord bot token, Telegram bot token
            r"\b(?:SK|AC)[0-9a-f]{32}\b"
            r"|\b[MNO][A-Za-z\d]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,}"
            r"|\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"
        ),
    ),
    Rule(
        id="secret-value",
        category="secret",
        why=_WHY,
        reads=("written",),
        secret=True,
        needs=(
            *("://", "pass", "pwd", "key", "secret", "token", "credential", "bearer", "mysql"),
            *("mariadb", "curl"),
        ),
        source=(
            # a connection string with a password in it (not a placeholder)
            r"(?i:\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\"]{0,64}:"
            + _NOT_PLACEHOLDER
            + r"(?:pass(?:word)?@)?(?!pass(?:word)?@|pwd@|secret@)[^\s@/'\"]{3,}@[^\s/'\"]+)"
            # an assignment, unless the value is a placeholder
            r"|(?i:\b(?:password|passwd|pwd|passphrase|api[_-]?key|secret[_-]?(?:access[_-]?)?key|"
            r"client[_-]?secret|api[_-]?secret|access[_-]?token|auth[_-]?token|bearer[_-]?token|"
            r"refresh[_-]?token|private[_-]?key|account[_-]?key|secret)['\"]?[ \t]{0,8}[:=]"
            r"[ \t]{0,8}['\"]?" + _NOT_PLACEHOLDER + r"(?=[^\s'\"<>]{0,200}[\d\W_])[^\s'\"<>]{8,})"
            # "password for the DB user above: ..."
            r"|(?i:\b(?:password|passphrase|passcode)\s(?:for|of|to)\s[^\n:]{1,60}:[ \t]{0,8}['\"]?"
            + _NOT_PLACEHOLDER
            + r"(?=[^\s'\"]{0,80}\d)(?=[^\s'\"]{0,80}[^\w\s'\"])[^\s'\"]{8,})"
            # "password is ...", or a random-looking value right after the word
            r"|(?i:\b(?:password|passphrase|passcode)\s(?:is\s|was\s)?['\"]?"
            + _NOT_PLACEHOLDER
            + r"(?=[^\s'\"]{0,80}\d)(?=[^\s'\"]{0,80}[a-z])(?=[^\s'\"]{0,80}[^\w\s'\"])"
            r"[^\s'\",;]{8,})"
            r"|(?i:\b(?:password|passphrase|passcode)\s(?:is|was)\s['\"]?"
            + _RANDOM
            + r"[^\s'\",;]{8,})"
            # "auth token 3f9a...", "API key: 8c1e..." as prose
            r"|(?i:\b(?:auth|access|api|secret|bot|bearer|refresh|session|app|client|master|admin|"
            r"root|service|deploy|signing)[ _-]?(?:token|key|secret)\s(?:is\s)?['\"]?"
            + _RANDOM
            + r"[A-Za-z0-9_\-+/=.]{20,})"
            # NAME_KEY=value, at the start of a line or after a space
            r"|(?:(?m:^)|(?<=[\s;,(]))(?:export[ \t]+)?[A-Z][A-Z0-9_]{0,40}(?:KEY|TOKEN|SECRET|"
            r"PASSWORD|PASS|PWD|CREDENTIALS?)[A-Z0-9_]{0,20}[ \t]?=[ \t]?['\"]?"
            + _NOT_PLACEHOLDER
            + r"(?=[^\s'\"]{0,200}\d)[^\s'\"]{8,}"
            r"|(?i:\bBearer\s[A-Za-z0-9_\-.=+/]{20,})"
            # a password on a command line: --password=..., mysql -p..., sshpass -p, curl -u a:b
            r"|(?i:(?:--password[= ]|\b(?:mysql|mysqldump|mariadb)\b[^\n]{0,80}?\s-p|"
            r"\bsshpass\s-p\s?)"
            r"['\"]?" + _RANDOM + r"[^\s'\"]{6,})"
            r"|(?i:\bcurl\s[^\n]{0,80}?\s(?:-u|--user)\s?['\"]?[^\s:'\"]{1,40}:"
            + _RANDOM
            + r"[^\s'\"@]{6,})"
        ),
    ),
)
