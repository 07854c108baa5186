"""Envelope encryption: AES-256-GCM data keys, wrapped by versioned key-encryption keys (KEKs).

This module is pure Python (it imports nothing from Django or the rest of the project) so that
it can be reviewed, tested and reused in isolation.

Layers:

* A *data key* (DEK, 32 random bytes from :func:`new_data_key`) encrypts field values with
  :func:`encrypt` / :func:`decrypt`.
* A *key-encryption key* (KEK) held by a :class:`KeyEncryptionProvider` (the in-process
  :class:`LocalKeyring`, or later a cloud KMS / Vault adapter) wraps data keys for storage.
* :func:`derive_key` derives independent sub-keys from a data key (e.g. the keyword-index key).

Invariants:

* Every ciphertext is bound to its location through :class:`AssociatedData` (table, row id,
  subject, field, key version). Moving a blob to another row, field, subject or key version makes
  it undecryptable, so a database-level attacker cannot swap encrypted values around.
* Blob format (both field ciphertexts and wrapped keys): ``0x01 || nonce(12) || ciphertext+tag``.
  The format byte is authenticated (it is part of the associated data), so a future format cannot
  be confused with this one.
* Every failure to decrypt or unwrap raises :class:`DecryptionError` (never ``InvalidTag``,
  ``ValueError``, ``IndexError`` ...) and no exception message or ``repr`` in this module contains
  key material or plaintext.
* Nonces are 96 random bits per encryption. With random nonces, NIST SP 800-38D limits one key to
  about 2**32 encryptions; keys are per namespace and rotated, which keeps us far below that.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = [
    "DATA_KEY_BYTES",
    "AssociatedData",
    "CryptoError",
    "DecryptionError",
    "KeyEncryptionProvider",
    "LocalKeyring",
    "UnknownKeyVersion",
    "decrypt",
    "derive_key",
    "encrypt",
    "new_data_key",
]

DATA_KEY_BYTES: Final = 32
"""Length of data keys and KEKs: AES-256."""

FORMAT_V1: Final = 0x01
NONCE_BYTES: Final = 12
TAG_BYTES: Final = 16
_MIN_BLOB_BYTES: Final = 1 + NONCE_BYTES + TAG_BYTES

# Domain tags keep the associated data of field ciphertexts and of wrapped keys disjoint, so no
# blob of one kind can ever authenticate as the other even if a key were (wrongly) reused.
_FIELD_AD_TAG: Final = b"memoryhub-field\x00"
_DEK_AD_TAG: Final = b"memoryhub-dek\x00"
_HKDF_INFO_PREFIX: Final = b"memoryhub:"
_HKDF_MAX_LENGTH: Final = 255 * 32  # RFC 5869: at most 255 blocks of the SHA-256 output size

# Versions are stored in PostgreSQL ``integer`` columns; bounding them here means a version that
# the database cannot hold is rejected before any data is encrypted under it.
_MAX_VERSION: Final = 2**31 - 1


class CryptoError(Exception):
    """Base class of every error this module raises on purpose."""


class DecryptionError(CryptoError):
    """A blob could not be decrypted or unwrapped.

    Raised for a wrong key, tampered or truncated bytes, mismatched associated data or an unknown
    format byte. Messages never contain key material or plaintext. They name structural problems
    (truncated, unknown format) but a wrong key, tampered bytes and a wrong location all give the
    same "authentication failed": AES-GCM cannot tell them apart, and neither should a caller.
    """


class UnknownKeyVersion(CryptoError):
    """A wrapped key names a KEK version the provider does not hold."""


def new_data_key() -> bytes:
    """Return a fresh data key: ``DATA_KEY_BYTES`` bytes from the OS CSPRNG."""
    return os.urandom(DATA_KEY_BYTES)


def _utf8(value: str, what: str) -> bytes:
    """Encode ``value`` as UTF-8, raising a ``ValueError`` that does not carry ``value``.

    ``UnicodeEncodeError`` keeps the whole input string in its ``object`` attribute, which would
    leak plaintext into tracebacks and error reporters, hence the fresh exception.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not valid Unicode (it contains a lone surrogate)") from None


def _check_version(version: object, what: str) -> int:
    # bool is an int subclass; True as a version is always a bug.
    if not isinstance(version, int) or isinstance(version, bool):
        raise TypeError(f"{what} must be an int, not {type(version).__name__}")
    if not 0 <= version <= _MAX_VERSION:
        raise ValueError(f"{what} must be between 0 and {_MAX_VERSION}, got {version}")
    return version


def _length_prefixed(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


@dataclass(frozen=True)
class AssociatedData:
    """Where an encrypted value lives; authenticated (not encrypted) alongside the ciphertext.

    Invariant: :meth:`encode` is injective — two instances with different field values never
    encode to the same bytes (every string is length-prefixed, the version is fixed-width).

    Construction validates types eagerly (``TypeError`` / ``ValueError``) so that a bad location
    fails where it is built, not later inside a decrypt that would then look like tampering.
    """

    table: str
    row_id: str
    subject: str
    field: str
    key_version: int

    def __post_init__(self) -> None:
        for name in ("table", "row_id", "subject", "field"):
            _utf8(getattr(self, name), f"AssociatedData.{name}")
        _check_version(self.key_version, "AssociatedData.key_version")

    def encode(self) -> bytes:
        """Canonical, unambiguous byte encoding used as AES-GCM associated data."""
        parts = [_FIELD_AD_TAG]
        for value in (self.table, self.row_id, self.subject, self.field):
            parts.append(_length_prefixed(value.encode("utf-8")))
        parts.append(self.key_version.to_bytes(4, "big"))
        return b"".join(parts)


def _check_key(key: object, what: str) -> bytes:
    """Return ``key`` as ``bytes`` if it is a ``DATA_KEY_BYTES``-long bytes-like, else raise."""
    if not isinstance(key, bytes | bytearray | memoryview):
        raise TypeError(f"{what} must be bytes, not {type(key).__name__}")
    key = bytes(key)
    if len(key) != DATA_KEY_BYTES:
        # Only the length is reported, never the bytes.
        raise ValueError(f"{what} must be {DATA_KEY_BYTES} bytes, got {len(key)}")
    return key


def _seal(key: bytes, plaintext: bytes, associated: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    format_byte = bytes([FORMAT_V1])
    ciphertext = AESGCM(key).encrypt(nonce, plaintext, format_byte + associated)
    return format_byte + nonce + ciphertext


def _open(key: object, blob: object, associated: bytes) -> bytes:
    """Inverse of :func:`_seal`; every failure becomes a generic :class:`DecryptionError`."""
    try:
        key = _check_key(key, "key")
    except (TypeError, ValueError):
        raise DecryptionError("decryption failed: the key is not a valid AES-256 key") from None
    # Database drivers hand bytea back as memoryview or bytes depending on the path taken.
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise DecryptionError("decryption failed: the ciphertext is not bytes")
    blob = bytes(blob)
    if len(blob) < _MIN_BLOB_BYTES:
        raise DecryptionError("decryption failed: the ciphertext is truncated")
    if blob[0] != FORMAT_V1:
        raise DecryptionError("decryption failed: unknown ciphertext format")
    nonce = blob[1 : 1 + NONCE_BYTES]
    try:
        return AESGCM(key).decrypt(nonce, blob[1 + NONCE_BYTES :], blob[:1] + associated)
    except InvalidTag:
        # Deliberately vague: wrong key, tampering and wrong location are indistinguishable.
        raise DecryptionError("decryption failed: authentication failed") from None


def encrypt(data_key: bytes, plaintext: str, associated: AssociatedData) -> bytes:
    """Encrypt ``plaintext`` under ``data_key``, bound to ``associated``.

    Returns ``0x01 || nonce(12) || ciphertext+tag``; the length is ``29 + len(utf-8 plaintext)``.
    A fresh random nonce is used per call, so encrypting the same text twice gives different
    blobs. Raises ``ValueError`` for a key that is not 32 bytes or a plaintext with lone
    surrogates, ``TypeError`` for wrong argument types.
    """
    key = _check_key(data_key, "data_key")
    if not isinstance(associated, AssociatedData):
        raise TypeError("associated must be an AssociatedData")
    return _seal(key, _utf8(plaintext, "plaintext"), associated.encode())


def decrypt(data_key: bytes, blob: bytes, associated: AssociatedData) -> str:
    """Decrypt a blob made by :func:`encrypt` with the same key and equal ``associated``.

    Raises :class:`DecryptionError` on any problem with the key or the blob, including a blob that
    authenticates but is not UTF-8 (which only a buggy writer could produce).
    """
    if not isinstance(associated, AssociatedData):
        raise TypeError("associated must be an AssociatedData")
    plaintext = _open(data_key, blob, associated.encode())
    try:
        return plaintext.decode("utf-8")
    except UnicodeDecodeError:
        raise DecryptionError("decryption failed: the plaintext is not UTF-8") from None


@runtime_checkable
class KeyEncryptionProvider(Protocol):
    """Wraps and unwraps data keys under versioned KEKs (local keyring, cloud KMS, Vault ...).

    Contract for implementations:

    * ``wrap`` always uses ``current_version`` and returns it with the blob; callers store both.
    * ``unwrap`` accepts any version in ``versions()`` so old wrapped keys stay readable after
      rotation, raises :class:`UnknownKeyVersion` for other versions and :class:`DecryptionError`
      for any other failure (wrong context, tampering).
    * ``context`` is authenticated: a key wrapped for one context (e.g. one namespace) cannot be
      unwrapped under another.
    """

    @property
    def current_version(self) -> int:
        """The KEK version new wraps use."""
        ...

    def versions(self) -> frozenset[int]:
        """Every KEK version that can unwrap."""
        ...

    def wrap(self, data_key: bytes, *, context: bytes) -> tuple[int, bytes]:
        """Wrap ``data_key``; return ``(current_version, wrapped blob)``."""
        ...

    def unwrap(self, wrapped: bytes, *, kek_version: int, context: bytes) -> bytes:
        """Return the data key inside ``wrapped``."""
        ...


def _dek_associated_data(context: bytes, kek_version: int) -> bytes:
    # The version is fixed-width at the end and the tag is fixed at the start, so the
    # variable-length context in the middle cannot make two (context, version) pairs collide.
    return _DEK_AD_TAG + context + kek_version.to_bytes(4, "big")


def _check_context(context: object) -> bytes:
    if not isinstance(context, bytes | bytearray | memoryview):
        raise TypeError(f"context must be bytes, not {type(context).__name__}")
    return bytes(context)


class LocalKeyring:
    """A :class:`KeyEncryptionProvider` holding KEKs in process memory.

    Invariants: at least one KEK; every version is an ``int`` in ``[0, 2**31 - 1]``; every KEK is
    exactly 32 bytes; the highest version is current. The keys are copied at construction, so
    later changes to the caller's mapping have no effect. ``repr``/``str`` show versions only.
    """

    __slots__ = ("_current", "_keys")

    def __init__(self, keys: Mapping[int, bytes]) -> None:
        if not isinstance(keys, Mapping):
            raise ValueError("keys must be a mapping of {version: 32-byte key}")
        if not keys:
            raise ValueError("a keyring needs at least one key")
        checked: dict[int, bytes] = {}
        for version, key in keys.items():
            try:
                checked[_check_version(version, "key version")] = _check_key(
                    key, f"key for version {version}"
                )
            except TypeError as error:
                # One exception type for "bad keyring input" keeps configuration loading simple.
                raise ValueError(str(error)) from None
        self._keys: dict[int, bytes] = checked
        self._current: int = max(checked)

    def __repr__(self) -> str:
        return f"LocalKeyring(versions={sorted(self._keys)}, current_version={self._current})"

    @property
    def current_version(self) -> int:
        """The highest configured version; new wraps use it."""
        return self._current

    def versions(self) -> frozenset[int]:
        """All configured versions."""
        return frozenset(self._keys)

    def wrap(self, data_key: bytes, *, context: bytes) -> tuple[int, bytes]:
        """AES-256-GCM-encrypt ``data_key`` under the current KEK, bound to ``context``."""
        plaintext = _check_key(data_key, "data_key")
        version = self._current
        blob = _seal(
            self._keys[version], plaintext, _dek_associated_data(_check_context(context), version)
        )
        return version, blob

    def unwrap(self, wrapped: bytes, *, kek_version: int, context: bytes) -> bytes:
        """Return the data key in ``wrapped``, made by ``wrap`` with KEK ``kek_version``."""
        if isinstance(kek_version, bool) or not isinstance(kek_version, int):
            raise UnknownKeyVersion(f"KEK version must be an int, not {type(kek_version).__name__}")
        key = self._keys.get(kek_version)
        if key is None:
            raise UnknownKeyVersion(f"no key-encryption key with version {kek_version}")
        try:
            associated = _dek_associated_data(_check_context(context), kek_version)
        except TypeError:
            raise DecryptionError("unwrap failed: the context is not bytes") from None
        data_key = _open(key, wrapped, associated)
        if len(data_key) != DATA_KEY_BYTES:
            # Authenticated but the wrong size: only a buggy writer could produce this.
            raise DecryptionError("unwrap failed: the wrapped key has the wrong length")
        return data_key


def derive_key(data_key: bytes, purpose: str, length: int = 32) -> bytes:
    """Derive a sub-key from ``data_key`` with HKDF-SHA256 (no salt, info ``memoryhub:<purpose>``).

    Deterministic: the same ``(data_key, purpose, length)`` always gives the same bytes, and
    different purposes give independent keys. HKDF output of one purpose with a shorter
    ``length`` is a prefix of the longer one, so use one length per purpose.

    ``data_key`` must be at least ``DATA_KEY_BYTES`` bytes (the derived keys are only as strong
    as their input); ``purpose`` must be a non-empty str; ``length`` is 1..8160.
    """
    if not isinstance(data_key, bytes | bytearray | memoryview):
        raise TypeError(f"data_key must be bytes, not {type(data_key).__name__}")
    key = bytes(data_key)
    if len(key) < DATA_KEY_BYTES:
        raise ValueError(f"data_key must be at least {DATA_KEY_BYTES} bytes, got {len(key)}")
    info = _HKDF_INFO_PREFIX + _utf8(purpose, "purpose")
    if not purpose:
        # An empty purpose would make the "separated by purpose" guarantee depend on luck.
        raise ValueError("purpose must not be empty")
    if isinstance(length, bool) or not isinstance(length, int):
        raise TypeError("length must be an int")
    if not 1 <= length <= _HKDF_MAX_LENGTH:
        raise ValueError(f"length must be between 1 and {_HKDF_MAX_LENGTH}")
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=info).derive(key)
