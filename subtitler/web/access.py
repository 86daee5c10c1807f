"""Who may open the page: loopback by name only, the local network only with the access token."""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
import socket

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})


def new_token() -> str:
    """A fresh access token: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


def token_ok(given: str | None, token: str) -> bool:
    """``given`` is the token, compared in constant time (an empty token admits no one)."""
    if not token or given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


# What a browser sends as Host: a name or an IPv4 address, or an IPv6 literal in brackets,
# then an optional port. Anything else ("127.0.0.1:8642@evil.example": user information, which
# a lax parser reads as the loopback name) is no host at all.
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::[0-9]{1,5})?\Z")


def host_name(host_header: str | None) -> str:
    """The name in a Host header, without its port, lower case ("" when there is none, or
    when the header is not a plain host and port)."""
    m = _HOST.match((host_header or "").strip().lower())
    return m.group(1) if m else ""


def loopback_host(host_header: str | None) -> bool:
    """The request names this computer. A web page elsewhere that points its own domain at
    127.0.0.1 (DNS rebinding) sends its domain here and is refused."""
    return host_name(host_header) in LOOPBACK_NAMES


def lan_address() -> str:
    """This computer's address on its local network (that of its default route), else the
    loopback address. Connecting a UDP socket sends nothing; it only picks the route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1 (RFC 5737): never a real host
            addr = str(s.getsockname()[0])
    except OSError:
        return "127.0.0.1"
    return addr if not ipaddress.ip_address(addr).is_unspecified else "127.0.0.1"
