"""The load test's chain-head sampler reads which head a waiting append takes from its
statement: the statements it classifies are the ones the audit service sends."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from apps.audit import services

# bench/loadtest is a folder of scripts, not a package: the module is loaded from its file.
_PATH = Path(__file__).resolve().parents[2] / "bench" / "loadtest" / "lockwaits.py"
_SPEC = importlib.util.spec_from_file_location("loadtest_lockwaits", _PATH)
assert _SPEC is not None
assert _SPEC.loader is not None
lockwaits = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = lockwaits  # its dataclasses look their module up there
_SPEC.loader.exec_module(lockwaits)
head_of = lockwaits.head_of


def test_it_tells_a_namespace_head_from_the_global_one_in_the_service_statement() -> None:
    assert head_of(services._TAKE_NEXT_LINK % 0) == "global"
    assert head_of(services._TAKE_NEXT_LINK % 7) == "namespace"


def test_it_reads_the_single_head_of_an_install_with_one_chain_as_shared() -> None:
    single = "UPDATE audit_chainhead SET last_id = last_id + 1 WHERE id = 1 RETURNING last_id"
    assert head_of(single) == "shared"
