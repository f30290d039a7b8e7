"""Example plugin: bug report #42 — "after a restart, create_alert runs twice".

Reproduced by a price-alerts provider that forgets its dedup records."""

from inspector.virtual.apps.pricealerts import PriceAlertsProvider


class ForgetfulAlerts(PriceAlertsProvider):
    PACKAGE = "com.example.bug42"
    LABEL = "Bug 42"

    def lookup_dedup(self, call):  # the one changed behaviour
        return None

    def store_outcome(self, db, call, outcome):
        return None


def register(device):
    device.install(ForgetfulAlerts())
