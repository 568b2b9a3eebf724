"""What a database URL says, read without opening anything: which backend it names, and the URL
with its password hidden. The backends import this module, never `bot.store` itself, so that the
package (which picks a backend from the URL) imports its backends and not the other way round."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

POSTGRES_SCHEMES = ("postgresql", "postgres")


def is_postgres(url: str) -> bool:
    return urlsplit(url).scheme in POSTGRES_SCHEMES


def redact_url(url: str) -> str:
    """The URL with its password replaced, for logs and messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


def url_password(url: str) -> str | None:
    """The password in a PostgreSQL URL, for the log redactor."""
    return urlsplit(url).password if is_postgres(url) else None
