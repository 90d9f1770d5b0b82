"""Endpoint credentials encrypted at rest with Fernet (AES-128-CBC + HMAC-SHA256).

The key is settings.ENDPOINT_CREDENTIALS_KEY (one or more comma-separated Fernet keys: the
first encrypts, all decrypt, so keys can be rotated). Production settings refuse to start
without it; only a DEBUG (local) setup, where it is empty, uses one derived from SECRET_KEY.
Plaintext leaves the database only in the server's answer to the `started` report of the
worker that runs a job (apps.jobs.services.job_event), never in a broker message.
"""

import base64
import hashlib
import hmac

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class CredentialError(Exception):
    """A stored credential cannot be decrypted (the key changed without rotation)."""


def _keys() -> list[bytes]:
    configured = [k.strip() for k in settings.ENDPOINT_CREDENTIALS_KEY.split(",") if k.strip()]
    if configured:
        return [k.encode() for k in configured]
    # Domain-separated, so this key is never equal to anything else derived from SECRET_KEY.
    digest = hashlib.sha256(b"inferboard:endpoint-credentials:" + settings.SECRET_KEY.encode())
    return [base64.urlsafe_b64encode(digest.digest())]


def _fernet() -> MultiFernet:
    try:
        return MultiFernet([Fernet(key) for key in _keys()])
    except ValueError as exc:
        raise ImproperlyConfigured(
            "ENDPOINT_CREDENTIALS_KEY must be Fernet keys (32 url-safe base64 bytes), comma "
            "separated; make one with: python -c 'from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())'"
        ) from exc


def encrypt(plaintext: str) -> str:
    return _fernet().encrypt(plaintext.encode()).decode() if plaintext else ""


def decrypt(ciphertext: str) -> str:
    if not ciphertext:
        return ""
    try:
        return _fernet().decrypt(ciphertext.encode()).decode()
    except InvalidToken:
        raise CredentialError(
            "the endpoint's key cannot be decrypted with ENDPOINT_CREDENTIALS_KEY; "
            "enter the key again"
        ) from None


def job_binding_secret(idempotency_key: str, attempt: int) -> str:
    """The per-attempt secret a queued job's task carries and its result document comes back
    with.

    Derived (HMAC of the job's idempotency key and attempt under SECRET_KEY, domain-separated)
    rather than stored, so checking it at ingestion needs no column and no lookup beyond the
    job; a token holder who never received the task cannot compute it. The attempt is in it
    because the key is not: a retry keeps the key, and the secret an earlier attempt's worker
    holds must not vouch for the attempt running now."""
    mac = hmac.new(
        b"inferboard:job-binding:" + settings.SECRET_KEY.encode(),
        f"{idempotency_key}\x00{attempt}".encode(),
        hashlib.sha256,
    )
    return mac.hexdigest()


def job_binding_matches(idempotency_key: str, attempt: int, secret: str) -> bool:
    return hmac.compare_digest(job_binding_secret(idempotency_key, attempt), secret)
