"""A TLS context built ahead of the model client, for a process that serves many runs (the
background daemon builds it once; each forked run reuses it when it would build the same).

Building the SDK's default context loads a CA bundle (``load_verify_locations``): about 30 ms
of CPU, on the path of every run's first request. The context the SDK's HTTP client builds by
default (``httpcore2.default_ssl_context``, on Linux) depends on the process environment's
``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` and, when neither is set, on OpenSSL's compiled-in CA
file. :class:`PreparedTls` records the two variables and a digest of the file that was
loaded (reading and hashing a CA bundle costs well under a millisecond; a modification time
could miss a rewrite within its granularity); :meth:`PreparedTls.for_environ` hands the
context out only while a run's environment names the same variables and that file is
unchanged; otherwise the client builds its own context, exactly as without the daemon. (A
certificate directory is read at each handshake, not when the context is built.) A context
holds no connection, so sharing a copy of it with a forked child is safe.
"""

from __future__ import annotations

import hashlib
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

CERT_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")
"""Environment variables that change the default context (Python's ``ssl`` and the HTTP client
read them)."""

_Key = tuple[str, str, bytes | None]


@dataclass(frozen=True, kw_only=True)
class PreparedTls:
    """A default client context and what it was built from."""

    context: ssl.SSLContext
    key: _Key

    def for_environ(self, environ: Mapping[str, str]) -> ssl.SSLContext | None:
        """The context, when a client started with ``environ`` would build the same one now;
        else ``None`` (the caller builds its own)."""
        return self.context if _key(environ) == self.key else None


def prepare_tls() -> PreparedTls | None:
    """The SDK HTTP client's default context, built now from this process's environment (the
    HTTP client reads ``os.environ``); ``None`` when the CA file it would load is unknown (no
    variable names one and OpenSSL's compiled-in file is missing: the HTTP client then searches
    other places) or cannot be loaded (each run then reports that itself)."""
    key = _key(os.environ)
    if key[2] is None and not key[1]:
        return None
    import httpcore2

    try:
        context = httpcore2.default_ssl_context()
    except (OSError, ssl.SSLError):
        return None
    return PreparedTls(context=context, key=key)


def _key(environ: Mapping[str, str]) -> _Key:
    """The certificate variables of ``environ`` and the SHA-256 digest of the CA file a
    default context built with them loads (``None``: no file, or none that can be read)."""
    cert_file, cert_dir = (environ.get(name, "") for name in CERT_VARIABLES)
    if cert_file:
        path = cert_file
    elif cert_dir:
        return (cert_file, cert_dir, None)
    else:
        path = ssl.get_default_verify_paths().openssl_cafile
    try:
        with open(path, "rb") as file:
            digest = hashlib.sha256(file.read()).digest()
    except OSError:
        return (cert_file, cert_dir, None)
    return (cert_file, cert_dir, digest)
