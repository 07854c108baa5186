"""PII detection and the namespace PII policy, as pure functions (no Django).

Detectors: e-mail addresses, phone numbers (libphonenumber's matcher), payment card numbers
(Luhn-checked), IBANs (mod-97), US social security numbers (area/group/serial rules) and API
secrets (known prefixes, private-key blocks, and long high-entropy tokens). Validation is
python-stdnum's, so a 16-digit order number that fails Luhn is not a card.

Policies: `allow` stores text as it is; `tag` stores it and tags the memory `pii:<type>`;
`redact` replaces each finding by a typed placeholder (`[EMAIL]`); `reject` refuses the write
naming the types found. Findings never carry the matched value out of this module: callers
get types and spans only, so an error message cannot echo the secret.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

import phonenumbers
from stdnum import iban, luhn
from stdnum.us import ssn

EMAIL, PHONE, CARD, IBAN, SSN, SECRET = "email", "phone", "card", "iban", "ssn", "secret"
TYPES = (EMAIL, PHONE, CARD, IBAN, SSN, SECRET)
PLACEHOLDERS = {kind: f"[{kind.upper()}]" for kind in TYPES}

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}(?!\w)"
)
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
_SSN = re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])")
_KNOWN_SECRETS = re.compile(
    r"(?<![\w-])(?:"
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"  # GitHub
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API key
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
    r"|mh_[A-Za-z0-9]{6,}_[A-Za-z0-9_-]{20,}"  # MemoryHub's own API keys
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWT
    r")"
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL
)
_TOKEN = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_=-]{24,}(?![\w+/=-])")
ENTROPY_BITS = 4.0  # per character; English words and ids stay well below


@dataclass(frozen=True)
class Finding:
    type: str
    start: int
    end: int


class PiiRejected(Exception):
    """The `reject` policy found PII. Carries the types found, never the values."""

    def __init__(self, types: list[str]) -> None:
        super().__init__(f"PII found: {', '.join(types)}")
        self.types = types


def shannon_bits(token: str) -> float:
    counts = Counter(token)
    total = len(token)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _is_secret_like(token: str) -> bool:
    classes = sum(
        (
            any(c.islower() for c in token),
            any(c.isupper() for c in token),
            any(c.isdigit() for c in token),
        )
    )
    return classes >= 2 and any(c.isdigit() for c in token) and shannon_bits(token) >= ENTROPY_BITS


def scan(text: str, *, phone_region: str = "US") -> list[Finding]:
    """Every finding in `text`, earliest first; overlapping findings keep the first-listed
    (most specific) type: secrets, e-mail, IBAN, card, SSN, phone."""
    found: list[Finding] = []
    for match in _PRIVATE_KEY.finditer(text):
        found.append(Finding(SECRET, match.start(), match.end()))
    for match in _KNOWN_SECRETS.finditer(text):
        found.append(Finding(SECRET, match.start(), match.end()))
    for match in _EMAIL.finditer(text):
        found.append(Finding(EMAIL, match.start(), match.end()))
    for match in _IBAN.finditer(text):
        if iban.is_valid(match.group()):
            found.append(Finding(IBAN, match.start(), match.end()))
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits) and len(set(digits)) > 1:
            found.append(Finding(CARD, match.start(), match.end()))
    for match in _SSN.finditer(text):
        if ssn.is_valid(match.group()):
            found.append(Finding(SSN, match.start(), match.end()))
    for phone in phonenumbers.PhoneNumberMatcher(
        text, phone_region, leniency=phonenumbers.Leniency.VALID
    ):
        found.append(Finding(PHONE, phone.start, phone.end))
    for match in _TOKEN.finditer(text):
        if _is_secret_like(match.group()):
            found.append(Finding(SECRET, match.start(), match.end()))
    return _without_overlaps(found)


def _without_overlaps(found: list[Finding]) -> list[Finding]:
    kept: list[Finding] = []
    for finding in found:  # in priority order
        if all(finding.end <= k.start or finding.start >= k.end for k in kept):
            kept.append(finding)
    return sorted(kept, key=lambda f: f.start)


def redact(text: str, findings: list[Finding]) -> str:
    parts, last = [], 0
    for finding in sorted(findings, key=lambda f: f.start):
        parts.append(text[last : finding.start])
        parts.append(PLACEHOLDERS[finding.type])
        last = finding.end
    parts.append(text[last:])
    return "".join(parts)


@dataclass(frozen=True)
class Screened:
    text: str  # what may be stored and embedded
    types: list[str]  # PII types found (sorted, distinct)
    tags: list[str]  # tags the policy adds (`pii:<type>` under `tag`)


def apply_policy(policy: str, text: str, *, phone_region: str = "US") -> Screened:
    """Screen `text` under a namespace policy; raises PiiRejected under `reject`."""
    if policy == "allow":
        return Screened(text=text, types=[], tags=[])
    findings = scan(text, phone_region=phone_region)
    types = sorted({f.type for f in findings})
    if not findings:
        return Screened(text=text, types=[], tags=[])
    if policy == "reject":
        raise PiiRejected(types)
    if policy == "redact":
        return Screened(text=redact(text, findings), types=types, tags=[])
    if policy == "tag":
        return Screened(text=text, types=types, tags=[f"pii:{t}" for t in types])
    raise ValueError(f"unknown PII policy {policy!r}")
