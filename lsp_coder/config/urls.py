"""A serving engine's URL: whether it can be used, and how it is shown without its password."""

from __future__ import annotations

import urllib.parse


def url_problem(url: str) -> str:
    """What is wrong with a serving engine's URL ("" when it can be used)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        reason = str(exc)
        if "port" in reason.lower():
            return "the port must be a number from 1 to 65535"
        if "bracket" in reason or "IPv6" in reason:
            return "an IPv6 address needs both brackets: http://[::1]:8080"
        return "it is not a URL"
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    if port is not None and not 1 <= port <= 65535:
        return "the port must be a number from 1 to 65535"
    return ""


def redact_url(url: str) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@`` (for messages and logs)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    if "@" not in authority:
        return url
    return f"{scheme}://***@{authority.rpartition('@')[2]}{slash}{path}"
