"""``--tcp`` addresses."""

from __future__ import annotations

import pytest

from lsp_coder.server.address import AddressError, is_loopback, parse_address


@pytest.mark.parametrize("text,expected", [
    ("2087", ("127.0.0.1", 2087)),
    (":2087", ("127.0.0.1", 2087)),
    ("0.0.0.0:80", ("0.0.0.0", 80)),
    ("localhost:2087", ("localhost", 2087)),
    ("[::1]:2087", ("::1", 2087)),
    ("[::]:0", ("::", 0)),
    ("example.com:65535", ("example.com", 65535)),
])
def test_good_addresses(text, expected):
    assert parse_address(text) == expected


@pytest.mark.parametrize("text,says", [
    ("localhost", "no port"),
    ("99999", "0 to 65535"),
    ("h:65536", "0 to 65535"),
    ("h:-1", "0 to 65535"),
    ("h:²", "0 to 65535"),
    ("::1:2087", "brackets"),
    ("[::1]", "[IPv6]:PORT"),
    ("[127.0.0.1]:80", "not an IPv6 address"),
    ("a b:80", "not a host name"),
])
def test_bad_addresses_say_why(text, says):
    with pytest.raises(AddressError, match=says.replace("[", r"\[").replace("]", r"\]")):
        parse_address(text)


def test_loopback():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")
