"""Who may open the page: loopback by name only, the local network only with the access token."""

from __future__ import annotations

import hmac
import ipaddress
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


def host_name(host_header: str | None) -> str:
    """The name in a Host header, without its port, lower case ("" when there is none)."""
    h = (host_header or "").strip().lower()
    if h.startswith("["):  # an IPv6 literal: [::1]:8642
        end = h.find("]")
        return h[: end + 1] if end > 0 else ""
    return h.rsplit(":", 1)[0] if ":" in h else h


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
