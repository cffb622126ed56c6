"""The ``--tcp`` address: ``HOST:PORT``, ``[IPv6]:PORT`` or a bare ``PORT`` (loopback)."""

from __future__ import annotations

import ipaddress

LOOPBACK = "127.0.0.1"
USAGE = "use PORT, HOST:PORT or [IPv6]:PORT"


class AddressError(ValueError):
    """An address that cannot be served on; the message is one line for the user."""


def parse_address(text: str) -> tuple[str, int]:
    """``(host, port)`` from an address; a missing host is the loopback interface.

    Raises:
        AddressError: no port, a port outside 0-65535, an unbracketed IPv6 address, or an
            empty or malformed host.
    """
    text = text.strip()
    if _digits(text):
        return LOOPBACK, _port(text, text)
    if text.startswith("["):
        host, sep, port = text[1:].partition("]")
        if not sep or not port.startswith(":"):
            raise AddressError(f"{text!r}: expected [IPv6]:PORT")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise AddressError(f"{text!r}: {host!r} is not an IPv6 address") from None
        return host, _port(port[1:], text)
    host, sep, port = text.rpartition(":")
    if not sep:
        raise AddressError(f"{text!r}: no port ({USAGE})")
    if ":" in host:
        raise AddressError(f"{text!r}: an IPv6 address needs brackets, e.g. [::1]:{port}")
    if not host:
        host = LOOPBACK
    elif any(c.isspace() or c in "/[]@" for c in host):
        raise AddressError(f"{text!r}: {host!r} is not a host name or address")
    return host, _port(port, text)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _port(text: str, whole: str) -> int:
    if not _digits(text) or int(text) > 65535:
        raise AddressError(f"{whole!r}: the port must be a number from 0 to 65535 ({USAGE})")
    return int(text)


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()
