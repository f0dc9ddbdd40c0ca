"""Bounded HTTPS requests to the package registries.  A registry's answer is untrusted: its size is capped while it
is read (never only by the Content-Length it declares), only the registry's own hosts are contacted (a redirect
or an artifact URL elsewhere is refused), and every failure becomes a ``SourceError`` with a recorded reason
(``registry_unreachable``, ``source_not_found``, ``registry_response_invalid``), never an exception that ends a run."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from benchsmith.archives import SourceError
from benchsmith.records import Reason

MAX_METADATA_BYTES = 64 * 1024 * 1024  # npm packuments of long-lived packages run to tens of MiB
MAX_ARTIFACT_BYTES = 256 * 1024 * 1024
TIMEOUT_SECONDS = 60.0

# The hosts each registry serves metadata and artifacts from; nothing else is ever requested.
ALLOWED_HOSTS = frozenset({"pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "deb.debian.org"})


class _NoForeignRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 - urllib's signature
        check_url(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_NoForeignRedirects)


def check_url(url: str) -> str:
    """``url`` when it is https (or Debian's http mirror, whose files are checked against signed digests) on an
    allowed host; ``SourceError`` otherwise."""
    parts = urllib.parse.urlsplit(url)
    scheme_ok = parts.scheme == "https" or (parts.scheme == "http" and parts.hostname == "deb.debian.org")
    if not scheme_ok or parts.hostname not in ALLOWED_HOSTS or parts.username or parts.port not in (None, 443, 80):
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{url[:200]!r}: not a URL of an allowed registry host")
    return url


def fetch_bytes(url: str, max_bytes: int, *, accept: str = "*/*") -> bytes:
    """The body at ``url``, at most ``max_bytes``; 404/410 is ``source_not_found``, every other failure
    ``registry_unreachable``."""
    check_url(url)
    req = urllib.request.Request(url, headers={"Accept": accept, "Accept-Encoding": "identity",
                                               "User-Agent": "benchsmith (registry sources)"})
    try:
        with _OPENER.open(req, timeout=TIMEOUT_SECONDS) as resp:
            declared = resp.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{url}: {declared} bytes > the limit of "
                                  f"{max_bytes}")
            chunks, total = [], 0
            while True:
                block = resp.read(1024 * 1024)
                if not block:
                    break
                total += len(block)
                if total > max_bytes:
                    raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{url}: more than {max_bytes} bytes")
                chunks.append(block)
            return b"".join(chunks)
    except SourceError:
        raise
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            raise SourceError(Reason.SOURCE_NOT_FOUND, f"{url}: HTTP {exc.code}") from None
        raise SourceError(Reason.REGISTRY_UNREACHABLE, f"{url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError, OSError) as exc:
        why = getattr(exc, "reason", None) or exc
        raise SourceError(Reason.REGISTRY_UNREACHABLE, f"{url}: {why}") from None


def fetch_json(url: str, max_bytes: int = MAX_METADATA_BYTES) -> dict[str, Any]:
    """A JSON object at ``url``; anything else is ``registry_response_invalid``."""
    body = fetch_bytes(url, max_bytes, accept="application/json")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{url}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{url}: not a JSON object")
    return data


def text_field(data: Any, key: str, max_chars: int = 300) -> str | None:
    """A string field of an untrusted JSON object, stripped and bounded; None when absent or not a string."""
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    value = " ".join(value.split())
    return value if len(value) <= max_chars else value[: max_chars - 3] + "..."
