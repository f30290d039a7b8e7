"""Factories wiring the engine to the in-memory fakes (shared by the consumer tests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.consumer.clock import FakeClock
from inspector.consumer.engine import ProviderSession
from inspector.consumer.options import EngineOptions
from inspector.consumer.recorder import Recorder
from inspector.consumer.v1 import V1ProviderSession
from tests.consumer.fakes import V1_AUTHORITY, V1_PACKAGE, FakeRelay, FakeV1Provider, FakeV2Provider


@dataclass
class V2Rig:
    relay: FakeRelay
    provider: FakeV2Provider
    session: ProviderSession
    recorder: Recorder
    clock: FakeClock


def v2_rig(options: EngineOptions | None = None, **provider_kw: Any) -> V2Rig:
    clock = FakeClock()
    relay = FakeRelay(clock)
    provider = relay.add_v2(**provider_kw)
    recorder = Recorder(device="fake")
    session = ProviderSession(relay, provider.authority, package=provider.package,
                              recorder=recorder, clock=clock, options=options)
    return V2Rig(relay, provider, session, recorder, clock)


@dataclass
class V1Rig:
    relay: FakeRelay
    provider: FakeV1Provider
    session: V1ProviderSession
    recorder: Recorder
    clock: FakeClock


def v1_rig(options: EngineOptions | None = None, **provider_kw: Any) -> V1Rig:
    clock = FakeClock()
    relay = FakeRelay(clock)
    provider = relay.add_v1(**provider_kw)
    recorder = Recorder(device="fake")
    session = V1ProviderSession(relay, V1_AUTHORITY, package=V1_PACKAGE, recorder=recorder,
                                clock=clock, options=options)
    return V1Rig(relay, provider, session, recorder, clock)
