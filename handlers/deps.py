"""What the listeners share, built once by the app factory."""
from __future__ import annotations

from dataclasses import dataclass, field

from bot.recent import Recent
from bot.service import DiagnosisService
from bot.settings import Settings
from bot.store import IncidentStore
from playbooks.model import Diagnosis


@dataclass
class Deps:
    service: DiagnosisService
    settings: Settings
    store: IncidentStore | None = None
    # (channel, thread ts) of threads the bot answered in: a log pasted there gets explained.
    threads: Recent[bool] = field(default_factory=lambda: Recent(2000))
    # target key -> its latest diagnosis, for "Show evidence" without a second run.
    diagnoses: Recent[Diagnosis] = field(default_factory=lambda: Recent(500))

    def namespace_for(self, channel: str | None, explicit: str | None) -> str:
        return explicit or self.settings.channel_namespaces.get(channel or "", "") or self.settings.namespace
