"""Envelope encryption: round trips, tamper detection, location binding, keyring rotation."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from apps.memories.crypto import (
    DATA_KEY_BYTES,
    AssociatedData,
    CryptoError,
    DecryptionError,
    KeyEncryptionProvider,
    LocalKeyring,
    UnknownKeyVersion,
    decrypt,
    derive_key,
    encrypt,
    new_data_key,
)

# Modest example counts keep the file at a few seconds; no deadline because the first AES call
# in a fresh process can be slow on a loaded CI machine.
fast = settings(max_examples=60, deadline=None)

keys = st.binary(min_size=DATA_KEY_BYTES, max_size=DATA_KEY_BYTES)
versions = st.integers(min_value=0, max_value=2**31 - 1)
associated_data = st.builds(
    AssociatedData,
    table=st.text(max_size=20),
    row_id=st.text(max_size=20),
    subject=st.text(max_size=20),
    field=st.text(max_size=20),
    key_version=versions,
)

KEY = bytes(range(DATA_KEY_BYTES))
OTHER_KEY = bytes(range(1, DATA_KEY_BYTES + 1))
AD = AssociatedData(
    table="memories_memory",
    row_id="0b5b6a2e-0000-4000-8000-000000000001",
    subject="subject-1",
    field="content",
    key_version=3,
)


def _changed(associated: AssociatedData, field: str) -> AssociatedData:
    value = getattr(associated, field)
    new_value = value + 1 if isinstance(value, int) else value + "x"
    return dataclasses.replace(associated, **{field: new_value})


# --- encrypt / decrypt -----------------------------------------------------------------------


@fast
@given(key=keys, plaintext=st.text(), associated=associated_data)
def test_it_round_trips_any_text(key: bytes, plaintext: str, associated: AssociatedData) -> None:
    assert decrypt(key, encrypt(key, plaintext, associated), associated) == plaintext


def test_it_round_trips_astral_characters_and_the_empty_string() -> None:
    for plaintext in ("", "🧠 𝄞 𠀀", "\x00nul\x00"):
        assert decrypt(KEY, encrypt(KEY, plaintext, AD), AD) == plaintext


def test_it_writes_format_byte_nonce_and_tagged_ciphertext() -> None:
    blob = encrypt(KEY, "héllo", AD)
    assert blob[0] == 0x01
    assert len(blob) == 1 + 12 + len("héllo".encode()) + 16


def test_it_still_decrypts_a_blob_written_by_the_first_release() -> None:
    # Stored data outlives code: this blob must stay readable for as long as format 0x01 exists.
    blob = bytes.fromhex(
        "0178412fabd5617010f993812473124d500864e4dbcf2427071bc91a0dc684d729938490b553c6"
        "ec1a7ef25223ffaad95f664f5e7a"
    )
    assert decrypt(KEY, blob, AD) == "Remember: café ☕ 𝄞"


def test_it_rejects_a_lone_surrogate_without_echoing_the_plaintext() -> None:
    with pytest.raises(ValueError, match="surrogate") as excinfo:
        encrypt(KEY, "secret-diary\ud800", AD)
    assert "secret-diary" not in str(excinfo.value)
    # UnicodeEncodeError would carry the whole plaintext in its `object` attribute.
    assert not isinstance(excinfo.value, UnicodeError)
    assert excinfo.value.__cause__ is None


def test_it_refuses_to_encrypt_with_a_short_key() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        encrypt(KEY[:16], "text", AD)


def test_it_uses_a_fresh_nonce_for_each_encryption() -> None:
    first, second = encrypt(KEY, "same text", AD), encrypt(KEY, "same text", AD)
    assert first != second
    assert first[1:13] != second[1:13]


@fast
@given(plaintext=st.text(max_size=50), data=st.data())
def test_it_detects_a_flipped_bit_anywhere(plaintext: str, data: st.DataObject) -> None:
    blob = bytearray(encrypt(KEY, plaintext, AD))
    position = data.draw(st.integers(min_value=0, max_value=len(blob) * 8 - 1))
    blob[position // 8] ^= 1 << (position % 8)
    with pytest.raises(DecryptionError):
        decrypt(KEY, bytes(blob), AD)


@fast
@given(plaintext=st.text(max_size=50), data=st.data())
def test_it_raises_decryption_error_for_a_truncated_blob(
    plaintext: str, data: st.DataObject
) -> None:
    blob = encrypt(KEY, plaintext, AD)
    cut = data.draw(st.integers(min_value=0, max_value=len(blob) - 1))
    with pytest.raises(DecryptionError):
        decrypt(KEY, blob[:cut], AD)


@pytest.mark.parametrize("field", ["table", "row_id", "subject", "field", "key_version"])
def test_it_fails_when_any_part_of_the_location_differs(field: str) -> None:
    blob = encrypt(KEY, "bound to its row", AD)
    with pytest.raises(DecryptionError):
        decrypt(KEY, blob, _changed(AD, field))


@fast
@given(first=associated_data, second=associated_data)
def test_it_fails_under_any_other_associated_data(
    first: AssociatedData, second: AssociatedData
) -> None:
    assume(first != second)
    with pytest.raises(DecryptionError):
        decrypt(KEY, encrypt(KEY, "text", first), second)


@fast
@given(key=keys, other=keys, plaintext=st.text(max_size=50))
def test_it_fails_under_another_data_key(key: bytes, other: bytes, plaintext: str) -> None:
    assume(key != other)
    with pytest.raises(DecryptionError):
        decrypt(other, encrypt(key, plaintext, AD), AD)


@pytest.mark.parametrize("bad_key", [b"", KEY[:31], KEY + b"\x00", "not bytes"])
def test_it_reports_a_malformed_key_as_a_decryption_error(bad_key: object) -> None:
    blob = encrypt(KEY, "text", AD)
    with pytest.raises(DecryptionError):
        decrypt(bad_key, blob, AD)  # type: ignore[arg-type]


def test_it_reports_an_unknown_format_byte_as_a_decryption_error() -> None:
    blob = encrypt(KEY, "text", AD)
    with pytest.raises(DecryptionError):
        decrypt(KEY, b"\x02" + blob[1:], AD)


def test_it_accepts_a_memoryview_blob_from_the_database_driver() -> None:
    blob = encrypt(KEY, "from bytea", AD)
    assert decrypt(KEY, memoryview(blob), AD) == "from bytea"


def test_it_keeps_key_and_plaintext_out_of_the_error_message() -> None:
    blob = encrypt(KEY, "very private words", AD)
    with pytest.raises(DecryptionError) as excinfo:
        decrypt(OTHER_KEY, blob, AD)
    message = str(excinfo.value)
    assert "private" not in message
    assert OTHER_KEY.hex() not in message
    assert repr(OTHER_KEY) not in message


def test_decryption_errors_are_crypto_errors() -> None:
    assert issubclass(DecryptionError, CryptoError)
    assert issubclass(UnknownKeyVersion, CryptoError)


# --- AssociatedData ------------------------------------------------------------------------


@fast
@given(first=associated_data, second=associated_data)
def test_associated_data_encoding_is_injective(
    first: AssociatedData, second: AssociatedData
) -> None:
    assume(first != second)
    assert first.encode() != second.encode()


def test_associated_data_encoding_does_not_depend_on_where_fields_split() -> None:
    left = AssociatedData(table="ab", row_id="c", subject="", field="f", key_version=1)
    right = AssociatedData(table="a", row_id="bc", subject="", field="f", key_version=1)
    assert left.encode() != right.encode()


@pytest.mark.parametrize("key_version", [-1, 2**31, True, "1"])
def test_associated_data_rejects_a_bad_key_version(key_version: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        AssociatedData(table="t", row_id="r", subject="", field="f", key_version=key_version)  # type: ignore[arg-type]


# --- new_data_key / derive_key -------------------------------------------------------------


def test_new_data_keys_are_32_random_bytes() -> None:
    generated = {new_data_key() for _ in range(20)}
    assert len(generated) == 20
    assert all(len(key) == DATA_KEY_BYTES for key in generated)


def test_derive_key_matches_hkdf_sha256_with_the_memoryhub_info_prefix() -> None:
    # Pinned: indexes are stored under derived keys, so the derivation must never change.
    expected = "124b675e6890afa83a1a19339089ffc1d9f6360891923767512ad0625486cfac"
    assert derive_key(KEY, "keyword-index").hex() == expected


@fast
@given(key=keys, purpose=st.text(min_size=1, max_size=30))
def test_derive_key_is_deterministic(key: bytes, purpose: str) -> None:
    assert derive_key(key, purpose) == derive_key(key, purpose)


@fast
@given(key=keys, first=st.text(min_size=1), second=st.text(min_size=1))
def test_derive_key_separates_purposes(key: bytes, first: str, second: str) -> None:
    assume(first != second)
    assert derive_key(key, first) != derive_key(key, second)


def test_derive_key_differs_from_its_input_and_across_input_keys() -> None:
    derived = derive_key(KEY, "keyword-index")
    assert derived != KEY
    assert derived != derive_key(OTHER_KEY, "keyword-index")


def test_derive_key_honours_the_requested_length() -> None:
    assert len(derive_key(KEY, "p", length=16)) == 16
    assert len(derive_key(KEY, "p", length=64)) == 64


@pytest.mark.parametrize(
    ("key", "purpose", "length", "match"),
    [
        (KEY[:16], "p", 32, "at least 32 bytes"),
        (KEY, "", 32, "empty"),
        (KEY, "p", 0, "between 1 and"),
        (KEY, "p\ud800", 32, "surrogate"),
    ],
)
def test_derive_key_rejects_bad_arguments(
    key: bytes, purpose: str, length: int, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        derive_key(key, purpose, length)


# --- LocalKeyring --------------------------------------------------------------------------

KEK_1 = bytes([1]) * DATA_KEY_BYTES
KEK_2 = bytes([2]) * DATA_KEY_BYTES


def test_local_keyring_is_a_key_encryption_provider() -> None:
    assert isinstance(LocalKeyring({1: KEK_1}), KeyEncryptionProvider)


@fast
@given(data_key=keys, context=st.binary(max_size=40))
def test_keyring_wrap_unwrap_round_trips(data_key: bytes, context: bytes) -> None:
    keyring = LocalKeyring({1: KEK_1})
    version, wrapped = keyring.wrap(data_key, context=context)
    assert keyring.unwrap(wrapped, kek_version=version, context=context) == data_key


def test_keyring_wraps_in_the_encrypt_format_without_exposing_the_data_key() -> None:
    _, wrapped = LocalKeyring({1: KEK_1}).wrap(KEY, context=b"ns")
    assert wrapped[0] == 0x01
    assert len(wrapped) == 1 + 12 + DATA_KEY_BYTES + 16
    assert KEY not in wrapped


@fast
@given(context=st.binary(max_size=20), other=st.binary(max_size=20))
def test_keyring_unwrap_fails_under_another_context(context: bytes, other: bytes) -> None:
    assume(context != other)
    keyring = LocalKeyring({1: KEK_1})
    version, wrapped = keyring.wrap(KEY, context=context)
    with pytest.raises(DecryptionError):
        keyring.unwrap(wrapped, kek_version=version, context=other)


def test_keyring_unwrap_detects_tampering() -> None:
    keyring = LocalKeyring({1: KEK_1})
    version, wrapped = keyring.wrap(KEY, context=b"ns")
    tampered = wrapped[:-1] + bytes([wrapped[-1] ^ 0x01])
    with pytest.raises(DecryptionError):
        keyring.unwrap(tampered, kek_version=version, context=b"ns")


def test_keyring_wraps_with_the_highest_version() -> None:
    keyring = LocalKeyring({2: KEK_2, 1: KEK_1})
    assert keyring.current_version == 2
    assert keyring.versions() == frozenset({1, 2})
    assert keyring.wrap(KEY, context=b"ns")[0] == 2


def test_rotated_keyring_unwraps_keys_wrapped_before_rotation() -> None:
    version, wrapped = LocalKeyring({1: KEK_1}).wrap(KEY, context=b"ns")
    rotated = LocalKeyring({1: KEK_1, 2: KEK_2})
    assert rotated.unwrap(wrapped, kek_version=version, context=b"ns") == KEY


def test_keyring_unwrap_fails_when_the_version_label_is_wrong() -> None:
    keyring = LocalKeyring({1: KEK_1, 2: KEK_2})
    _, wrapped = keyring.wrap(KEY, context=b"ns")
    with pytest.raises(DecryptionError):
        keyring.unwrap(wrapped, kek_version=1, context=b"ns")


def test_keyring_raises_unknown_key_version() -> None:
    _, wrapped = LocalKeyring({1: KEK_1, 2: KEK_2}).wrap(KEY, context=b"ns")
    with pytest.raises(UnknownKeyVersion):
        LocalKeyring({1: KEK_1}).unwrap(wrapped, kek_version=2, context=b"ns")


def test_keyring_repr_shows_versions_but_no_key_bytes() -> None:
    keyring = LocalKeyring({1: KEK_1, 7: KEK_2})
    for text in (repr(keyring), str(keyring)):
        assert "7" in text
        for kek in (KEK_1, KEK_2):
            assert kek.hex() not in text
            assert repr(kek) not in text
            assert repr(kek)[2:-1][:8] not in text


def test_keyring_is_not_affected_by_later_changes_to_the_mapping() -> None:
    keys = {1: KEK_1}
    keyring = LocalKeyring(keys)
    version, wrapped = keyring.wrap(KEY, context=b"ns")
    keys[1] = KEK_2
    keys[9] = KEK_2
    assert keyring.current_version == 1
    assert keyring.unwrap(wrapped, kek_version=version, context=b"ns") == KEY


@pytest.mark.parametrize(
    ("keys", "match"),
    [
        ({}, "at least one key"),
        ({1: KEK_1[:16]}, "32 bytes"),
        ({1: "k" * 32}, "must be bytes"),
        ({-1: KEK_1}, "between 0 and"),
        ({True: KEK_1}, "must be an int"),
        ({"1": KEK_1}, "must be an int"),
        ([(1, KEK_1)], "mapping"),
    ],
)
def test_keyring_rejects_bad_input(keys: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LocalKeyring(keys)  # type: ignore[arg-type]
