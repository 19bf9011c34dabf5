"""What the listeners share, built once by the app factory."""
from __future__ import annotations

from dataclasses import dataclass, field

from bot.recent import Recent
from bot.service import DiagnosisService
from bot.settings import Settings
from bot.store import IncidentStore
from bot.threads import BotThreads
from playbooks.model import Diagnosis


@dataclass
class Deps:
    service: DiagnosisService
    settings: Settings
    store: IncidentStore | None = None
    # Threads the bot answered in: a log pasted there gets explained (shared through the store).
    threads: BotThreads = field(init=False)
    # target key -> its latest diagnosis, for "Show evidence" without a second run.
    diagnoses: Recent[Diagnosis] = field(default_factory=lambda: Recent(500))

    def __post_init__(self) -> None:
        self.threads = BotThreads(self.store)

    def namespace_for(self, channel: str | None, explicit: str | None) -> str:
        return explicit or self.settings.channel_namespaces.get(channel or "", "") or self.settings.namespace
