"""Device and provider selection: start-up, hot-plug, rescans, and opening a provider
or an extension in the centre of the window."""

from __future__ import annotations

from inspector.consumer.engine import ProviderSession
from inspector.ui.composer import ToolTarget
from inspector.ui.controller import UNPLUGGED
from inspector.ui.navigator import add_finding_warnings
from inspector.ui.text import bound


class ProviderSelection:
    """Mixin of MainWindow: what is selected and what the centre shows for it."""

    def start(self) -> None:
        serial = self.initial_serial  # `-d SERIAL`; the virtual device otherwise

        async def boot() -> None:
            await self.controller.refresh_devices()
            if serial != "virtual":
                self.current_serial = serial
            await self.controller.connect(serial)
            self._status.setText("Ready — pick a provider, or press F5 to rescan.")

        what = "Starting the virtual device" if serial == "virtual" else f"Connecting to {serial}"
        self.run(boot(), "startup", what)

    def _poll_devices(self) -> None:
        if self._polling or not self.controller.devices_manager._use_adb:
            return
        self._polling = True

        async def go() -> None:
            try:
                await self.controller.refresh_devices()
            finally:
                self._polling = False

        self.run(go(), "hotplug", "Listing adb devices")

    def connect_device(self, serial: str) -> None:
        e = self.controller.device(serial)
        if e is not None and (e.session is None or not e.session.link.connected):
            if not e.info.usable:
                self.report(f"{serial} is not usable", e.info.message or e.info.state)
                return
            self.current_serial = serial
            self.run(
                self.controller.connect(serial), f"connect:{serial}", f"Connecting to {serial}"
            )

    def explore_virtual(self) -> None:
        async def go() -> None:
            d = self.controller.discovery("virtual") or await self.controller.rescan("virtual")
            if d.cetp:
                self.navigator.select("virtual", d.cetp[0].key)

        self.run(go(), "explore-virtual", "Opening the virtual device")

    def rescan(self) -> None:
        async def go() -> None:
            await self.controller.refresh_devices()
            for serial, e in list(self.controller.devices.items()):
                if e.session is not None and e.state != UNPLUGGED:
                    await self.controller.rescan(serial)

        self.run(go(), "rescan", "Rescan")

    def reconnect(self) -> None:
        serial = self.current_serial or "virtual"
        self.run(self.controller.reconnect(serial), f"reconnect:{serial}", "Reconnect")


    def _devices_changed(self, devices: list) -> None:
        states = {s: e.state for s, e in self.controller.devices.items()}
        self.navigator.model.set_devices(devices, states)
        phones = [d for d in devices if d.kind == "adb"]
        if not phones:
            self.empty.title.setText("No phone connected")
        else:
            self.empty.title.setText("Pick a provider on the left")

    def _link_state(self, serial: str, state: str, detail: str) -> None:
        self.navigator.model.set_link_state(serial, state)
        if serial == (self.current_serial or "virtual"):
            self._link_label.setText(
                f"{serial}: {state}" + (f" — {bound(detail, 80)}" if detail else "")
            )

    def _discovery_changed(self, serial: str) -> None:
        d = self.controller.discovery(serial)
        if d is not None:
            self.navigator.model.set_discovery(serial, d)
            self.navigator.tree.expandAll()
            self.navigator.fit_columns()
        if self.current_key and self.current_serial == serial and d is not None:
            entry = self.controller.entry(self.current_key)
            if entry is not None:
                found = [x for x in d.cetp if x.key == entry.declaration.key]
                if found:
                    entry.declaration = found[0]
                    self.overview.show_declaration(found[0])

    def open_provider(self, serial: str, decl_key: str) -> None:
        d = self.controller.discovery(serial)
        decl = next((x for x in (d.cetp if d else []) if x.key == decl_key), None)
        if decl is None:
            return
        entry = self.controller.open(serial, decl)
        self.current_key = entry.key
        self.current_extension = None
        self.current_serial = serial
        self.stack.setCurrentWidget(self.tabs)
        self.overview.show_declaration(decl)
        self.composer.set_target(None)
        self.current_request_id = None
        self.result.show_execution(None)
        self.operations.show_executions([x for x in entry.executions.values() if x.operation_id])
        if entry.loaded:
            self._provider_changed(entry.key)
        else:
            self.overview.show_session(None)
            self.overview.show_info(None)
            self.tools.show_tools(None)
            self.run(self.controller.load(entry.key), f"load:{entry.key}", "Loading the provider")

    def open_extension(self, serial: str, ext_id: str) -> None:
        d = self.controller.discovery(serial)
        decl = next((e for e in (d.extensions if d else []) if e.id == ext_id), None)
        if decl is None:
            return
        key, host = self.controller.extension_host(serial, decl)
        self.current_extension = key
        self.current_key = None
        self.current_serial = serial
        self.extension_view.show_host(host)
        self.stack.setCurrentWidget(self.extension_view)
        if not host.functions:
            self.run(self.controller.load_extension(key), f"ext:{key}", "Reading the manifest")

    def _extension_changed(self, key: str) -> None:
        if key == self.current_extension:
            _serial, host = self.controller.extensions[key]
            self.extension_view.show_host(host)

    def _call_extension(self, function: str, params: str, bridge: str, approved: bool) -> None:
        key = self.current_extension
        if key is None:
            return

        composer = self.extension_view.composer
        call_id = composer.in_flight.request_id if composer.in_flight else f"ext:{function}"

        async def go() -> None:
            call = await self.controller.call_extension(key, function, params, bridge, approved)
            if key == self.current_extension:
                self.extension_view.show_call(call)

        task = self.run(go(), f"ext-call:{function}", f"Calling {function}")
        self.track_call(call_id, task, composer)

    def _cancel_extension_call(self, call_id: str) -> None:
        """Stop waiting for an extension call (a bridge call cannot be taken back)."""
        task = self.in_flight.get(call_id)
        if task is not None:
            task.cancel()
        self.extension_view.call_stopped()


    def _provider_changed(self, key: str) -> None:
        if key != self.current_key:
            return
        entry = self.controller.entry(key)
        if entry is None or entry.engine is None:
            return
        if self.tabs.currentWidget() is self.conformance_holder:
            self.show_conformance()
        eng = entry.engine
        self.overview.show_error(entry.error)
        session = getattr(eng, "session", None)
        self.overview.show_session(session)
        self.overview.show_info(getattr(eng, "info", None))
        # the same verdict found again (tools re-listed) is shown once
        findings = list(
            {(f.rule_id, f.message, f.ok): f for f in getattr(eng, "findings", [])}
            .values()
        )
        self.overview.show_findings(findings)
        broken = [
            f"{f.section} {f.rule_id}: {f.message}"
            for f in findings
            if not f.ok and f.level == "MUST"
        ]
        add_finding_warnings(self.navigator.model, entry.serial, entry.declaration.key, broken)
        v1 = entry.v1_engine.tools if entry.v1_engine is not None else None
        if isinstance(eng, ProviderSession):
            invalid = [str(v) for v in eng.tool_violations]
            self.tools.show_tools(eng.tools, eng.last_diff, v1, invalid)
        else:
            self.tools.show_tools(None, None, eng.tools)

    def compose(self, tool_name: str, version: int) -> None:
        entry = self.controller.entry(self.current_key or "")
        if entry is None or entry.engine is None:
            return
        eng = entry.engine
        if version == 2 and isinstance(eng, ProviderSession):
            t = eng.tool(tool_name)
            if t is None:
                return
            target = ToolTarget(
                name=t.name,
                title=t.title,
                description=t.description,
                input_schema=t.input_schema,
                annotations=t.annotations,
                max_request_bytes=eng.session.max_request_bytes if eng.session else None,
            )
        else:
            tools = (entry.v1_engine or eng).tools if version == 1 else eng.tools
            t1 = tools.tool(tool_name) if tools else None
            if t1 is None:
                return
            target = ToolTarget(
                name=t1.name, description=t1.description, input_schema=t1.parameters
            )
        shown = self.result.execution
        if shown is None or shown.tool_name != target.name:
            # a result is only ever shown under the call it belongs to
            self.current_request_id = None
            self.result.show_execution(None)
        self.composer.set_target(target)
        self.tabs.setCurrentIndex(2)

