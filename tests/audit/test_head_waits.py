"""The load test's chain-head sampler reads which head a waiting append takes from its
statement: the statements it classifies are the ones the audit service sends."""

from __future__ import annotations

import sys
from pathlib import Path

from apps.audit import services

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "loadtest"))
from lockwaits import head_of  # bench/loadtest is not a package


def test_it_tells_a_namespace_head_from_the_global_one_in_the_service_statement() -> None:
    assert head_of(services._TAKE_NEXT_LINK % 0) == "global"
    assert head_of(services._TAKE_NEXT_LINK % 7) == "namespace"


def test_it_reads_the_single_head_of_an_install_with_one_chain_as_shared() -> None:
    single = "UPDATE audit_chainhead SET last_id = last_id + 1 WHERE id = 1 RETURNING last_id"
    assert head_of(single) == "shared"
