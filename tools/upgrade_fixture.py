"""Regenerate the upgrade fixture: a backup of a database made by this code with the demo
loaded, which tests/backups/test_upgrade.py restores and migrates with the current code.

    .venv/bin/python tools/upgrade_fixture.py

Run it at each release (the fixture's name carries the version); keep the older ones. It
uses a scratch data directory of its own (var/upgrade-fixture/, emptied first) with a new
KEK, which goes into the backup sealed under the passphrase below: the fixture is test data,
and its passphrase is public.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASSPHRASE = "memoryhub upgrade fixture"  # noqa: S105 (public: the fixture is test data)
FIXTURES = ROOT / "tests" / "backups" / "fixtures"


def main() -> int:
    scratch = ROOT / "var" / "upgrade-fixture"
    target = FIXTURES / f"upgrade-{metadata.version('memoryhub')}"
    if target.exists():
        print(f"{target} exists: remove it first to make it again.", file=sys.stderr)
        return 1
    shutil.rmtree(scratch, ignore_errors=True)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("MEMORYHUB_", "DATABASE"))},
        "DEBUG": "1",
        "HF_HUB_OFFLINE": "1",
        "MEMORYHUB_DATA_DIR": str(scratch),
        "MEMORYHUB_ESCROW_PASSPHRASE": PASSPHRASE,
    }
    for command in (
        ["migrate", "--noinput", "-v0"],
        ["demo", "load"],
        ["backup", str(target), "--with-keyring"],
    ):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True)  # noqa: S603
    shutil.rmtree(scratch, ignore_errors=True)
    size = sum(path.stat().st_size for path in target.iterdir())
    print(f"Wrote {target.relative_to(ROOT)} ({size / 1_048_576:.2f} MB).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
