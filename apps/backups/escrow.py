"""Key escrow: the keyring (MEMORYHUB_KEK's value) encrypted under a passphrase.

scrypt derives a key from the passphrase and a random salt; AES-GCM encrypts the keyring
with it, binding the format name and the KDF's parameters as associated data, so a changed
parameter or a wrong passphrase fails to decrypt instead of giving a wrong keyring. The file
is JSON; nothing in it is a key in clear.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from memoryhub.json_input import json_loads

FORMAT = "memoryhub-keyring-escrow/1"
# scrypt's cost: 2^15 x 8 x 128 bytes = 32 MiB and about a tenth of a second per attempt.
COST = {"n": 2**15, "r": 8, "p": 1}


class EscrowError(ValueError):
    """The escrow file is not one, or the passphrase does not open it."""


@dataclass(frozen=True)
class Escrow:
    salt: bytes
    nonce: bytes
    ciphertext: bytes
    n: int = COST["n"]
    r: int = COST["r"]
    p: int = COST["p"]

    def associated_data(self) -> bytes:
        return f"{FORMAT};scrypt;n={self.n};r={self.r};p={self.p}".encode()

    def to_json(self) -> str:
        encode = lambda value: base64.b64encode(value).decode()  # noqa: E731
        return json.dumps(
            {
                "format": FORMAT,
                "kdf": {"name": "scrypt", "n": self.n, "r": self.r, "p": self.p},
                "salt": encode(self.salt),
                "nonce": encode(self.nonce),
                "ciphertext": encode(self.ciphertext),
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str) -> Escrow:
        try:
            document = json_loads(text)
            if document.get("format") != FORMAT or document["kdf"]["name"] != "scrypt":
                raise EscrowError(f"not a keyring escrow ({FORMAT})")
            kdf = document["kdf"]
            return cls(
                salt=base64.b64decode(document["salt"], validate=True),
                nonce=base64.b64decode(document["nonce"], validate=True),
                ciphertext=base64.b64decode(document["ciphertext"], validate=True),
                n=int(kdf["n"]),
                r=int(kdf["r"]),
                p=int(kdf["p"]),
            )
        except EscrowError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError):
            raise EscrowError(f"not a keyring escrow ({FORMAT})") from None


def _key(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    if not passphrase:
        raise EscrowError("the passphrase is empty")
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode())


def seal(keyring: str, passphrase: str) -> Escrow:
    """The keyring (MEMORYHUB_KEK's value) encrypted under the passphrase."""
    salt, nonce = os.urandom(16), os.urandom(12)
    draft = Escrow(salt=salt, nonce=nonce, ciphertext=b"")
    key = _key(passphrase, salt, draft.n, draft.r, draft.p)
    ciphertext = AESGCM(key).encrypt(nonce, keyring.encode(), draft.associated_data())
    return Escrow(salt=salt, nonce=nonce, ciphertext=ciphertext)


def open_escrow(escrow: Escrow, passphrase: str) -> str:
    """The keyring inside; EscrowError when the passphrase is wrong or the file was changed."""
    key = _key(passphrase, escrow.salt, escrow.n, escrow.r, escrow.p)
    try:
        plain = AESGCM(key).decrypt(escrow.nonce, escrow.ciphertext, escrow.associated_data())
    except InvalidTag:
        raise EscrowError("the passphrase is wrong, or the file was changed") from None
    return plain.decode()
