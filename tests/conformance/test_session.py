"""Through an inspection Session: its traffic log holds the evidence, its confirmation
policy is taken over while the suite runs and restored after, and a lost reply is a real
dropped connection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inspector.conformance import Outcome, run_conformance
from inspector.session.devices import VIRTUAL_SERIAL, DeviceManager, VirtualConfig
from inspector.session.session import Session
from inspector.tasks import Spawner

from .conftest import full_setup

PRICE = "com.example.pricealerts"


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[Session]:
    m = DeviceManager(VirtualConfig(state_dir=str(tmp_path / "state")), use_adb=False)
    s = Session(VIRTUAL_SERIAL, m.connector(VIRTUAL_SERIAL), spawner=Spawner())
    await s.open()
    yield s
    await s.close()
    await s.spawner.cancel_all()
    await m.close()


async def test_run_through_a_session(session: Session) -> None:
    async def deny_everything(_request: object) -> bool:
        return False

    session.confirmation_policy = deny_everything
    setup = full_setup(resume_token_ttl_ms=None)
    setup.async_call = None
    report = await run_conformance(session, session.find_provider(PRICE), setup=setup,
                                   select=["idempotency", "confirmation", "negotiate.*"],
                                   skip=["confirmation.expired_token"])
    bad = [(r.check_id, r.outcome.value, r.message) for r in report.results
           if r.outcome not in (Outcome.PASS, Outcome.SKIPPED)]
    assert bad == []
    assert session.confirmation_policy is deny_everything  # restored
    retry = report.result("idempotency.retry_after_timeout")
    assert retry.evidence.observed["reply_lost"] is True
    assert "died right after committing" in retry.evidence.observed["how"]
    logged = {x.id for x in session.exchanges}
    for r in report.results:
        assert set(r.evidence.exchange_ids) <= logged
