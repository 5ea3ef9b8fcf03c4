"""A database store's address (a `postgresql://` URL), read strictly and shown safely.

An address may carry a password (`TOOLNEXUS_STORE` may; IDENTITY.md's `store:`
may not). libpq reads a `/`, `@`, `?`, `#`, `%` or space left unencoded in
the user or password as the end of it, so a password such as `SEC/RET` would
end up in the host or the database name, and from there in every message that
names the store. So an address is read here by one strict rule, with no
guessing: one that does not read as `postgresql://[user[:password]@]hosts[/db][?params]`
with those characters percent-encoded is refused with one line that shows no
part of it, and messages show only the hosts and the database of one that does.
Any error text from the driver passes through `scrubbed`, which cuts out the
password and every piece of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = ["UNREADABLE", "Address", "holds_password", "read_address", "scrubbed", "shown"]

_USER = r"(?:[^:@/?#\s%]|%[0-9A-Fa-f]{2})*"
_PASSWORD = r"(?:[^@/?#\s%]|%[0-9A-Fa-f]{2})*"
_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[\w.%-]*)(?::\d{1,5})?"
_URL = re.compile(
    rf"(?i:postgres(?:ql)?)://(?:(?P<user>{_USER})(?::(?P<password>{_PASSWORD}))?@)?"
    rf"(?P<hosts>{_HOST}(?:,{_HOST})*)(?:/(?P<db>[^?#@\s]*))?(?:\?(?P<query>[^#@\s]*))?"
)
#: libpq's other form: `host=db port=5432 dbname=app` (a value may be 'quoted').
_PAIR = re.compile(r"\s*(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']+)\s*")
_PARAM_PASSWORD = re.compile(r"(?:^|&)password=([^&]*)", re.IGNORECASE)
#: What a malformed address is told, whatever is wrong with it (it names no part of it).
UNREADABLE = (
    "the store address cannot be read: write it as postgresql://user@host:port/database, "
    "with any '/', '@', '%', '?', '#' or space in the user or password percent-encoded "
    "(%2F, %40, %25, %3F, %23, %20), or better, the password in PGPASSWORD or ~/.pgpass"
)
_SHOWN_UNREADABLE = "postgresql://?"


@dataclass(frozen=True, slots=True)
class Address:
    """A well-formed store address, in its parts (the password percent-decoded)."""

    hosts: str
    database: str
    password: str | None

    @property
    def shown(self) -> str:
        """As messages show it: hosts and database, never a user or password."""
        return f"postgresql://{self.hosts or 'localhost'}/{self.database}"


def _pairs(dsn: str) -> dict[str, str] | None:
    """A `key=value` address as its pairs, or None when it is not one."""
    pairs: dict[str, str] = {}
    at = 0
    text = dsn.strip()
    while at < len(text):
        found = _PAIR.match(text, at)
        if found is None or found.end() == at:
            return None
        value = found[2]
        if value.startswith("'"):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        pairs[found[1].lower()] = value
        at = found.end()
    return pairs or None


def read_address(dsn: str) -> Address | None:
    """`dsn` in its parts, or None when it does not read as one `postgresql://` URL (or
    libpq's `key=value` form)."""
    found = _URL.fullmatch(dsn.strip())
    if found is None:
        pairs = None if "://" in dsn else _pairs(dsn)
        if pairs is None:
            return None
        host, port = pairs.get("host", ""), pairs.get("port", "")
        return Address(
            hosts=f"{host}:{port}" if host and port else host or (f":{port}" if port else ""),
            database=pairs.get("dbname", ""),
            password=pairs.get("password"),
        )
    password = found["password"]
    param = _PARAM_PASSWORD.search(found["query"] or "")
    if password is None and param is not None:
        password = param.group(1)
    return Address(
        hosts=found["hosts"],
        database=unquote(found["db"] or ""),
        password=unquote(password) if password is not None else None,
    )


def shown(dsn: str) -> str:
    """`dsn` as messages show it: hosts and database, never any part of a user or password,
    however malformed it is."""
    address = read_address(dsn)
    return _SHOWN_UNREADABLE if address is None else address.shown


def holds_password(dsn: str) -> bool:
    """Whether `dsn` holds a password (an address that cannot be read is taken to)."""
    address = read_address(dsn)
    if address is None:
        return True
    return address.password is not None


def _secrets(dsn: str) -> list[str]:
    """Every text that may be (part of) the password in `dsn`, longest first: the whole of
    it as written and decoded, and each piece a misreading could have cut it into."""
    text = dsn.strip()
    rest = text.split("://", 1)[1] if "://" in text else text
    found: set[str] = set()
    # As written: everything between the first ':' of the user part and the last '@'
    # (a misread address put some of it in the host or the database).
    at = rest.rfind("@")
    if at >= 0 and ":" in rest[:at]:
        found.add(rest[:at].split(":", 1)[1])
    for match in _PARAM_PASSWORD.finditer(text.split("?", 1)[1] if "?" in text else ""):
        found.add(match.group(1))
    for match in re.finditer(r"password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", text, re.I):
        found.add(match.group(1).strip("'"))
    pieces: set[str] = set()
    for secret in found:
        for form in (secret, unquote(secret)):
            pieces.add(form)
            pieces.update(p for p in re.split(r"[/@?#%:&=\s]+", form) if len(p) >= 2)
    return sorted((p for p in pieces if p), key=len, reverse=True)


def scrubbed(text: str, dsn: str) -> str:
    """`text` (a driver's error, say) with the password of `dsn`, and every piece of it,
    replaced by `***`."""
    for secret in _secrets(dsn):
        text = text.replace(secret, "***")
    return text
