"""What the listeners share, built once by the app factory."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from slack_sdk import WebClient

from bot.errors import UserError
from bot.payloads import Signer
from bot.recent import Recent
from bot.service import Asker, DiagnosisService
from bot.settings import Settings
from bot.store import IncidentStore
from bot.threads import BotThreads
from handlers.reply import Reply
from playbooks.model import Diagnosis

if TYPE_CHECKING:
    from bot.remediation.flow import Remediator
    from bot.store.proposals import ProposalStore


@dataclass
class Deps:
    service: DiagnosisService
    settings: Settings
    store: IncidentStore | None = None
    # Changes behind an approval (None: no incident store, so no place to keep proposals).
    remediation: "Remediator | None" = None
    # Seals every button value and modal metadata the bot sends; opens them when they come back.
    signer: Signer = field(init=False)
    # Threads the bot answered in: a log pasted there gets explained (shared through the store).
    threads: BotThreads = field(init=False)
    # (target key, the asker's access) -> its latest diagnosis, for "Show evidence" without a second run.
    diagnoses: Recent[Diagnosis] = field(default_factory=lambda: Recent(500))
    # Private explanations of pasted text, held for their "Share in channel" button (key: random id).
    explanations: Recent[tuple[str, Diagnosis]] = field(default_factory=lambda: Recent(200))
    # How many requests would wait before this one (a request body) starts; None: not known.
    backlog: Callable[[dict], int] | None = None

    def __post_init__(self) -> None:
        self.threads = BotThreads(self.store)
        self.signer = Signer.from_settings(self.settings)

    def reply(self, client: WebClient, *, channel: str, user: str | None, **kwargs) -> Reply:
        return Reply(client=client, channel=channel, user=user, signer=self.signer, **kwargs)

    def remediator(self) -> "Remediator":
        if self.remediation is None:
            raise UserError("changes are not available in this installation: it has no incident store")
        return self.remediation

    def proposals(self) -> "ProposalStore":
        return self.remediator().proposals

    def queued_ahead(self, body: dict) -> int:
        return self.backlog(body) if self.backlog is not None else 0

    @staticmethod
    def asker(user: str | None, channel: str | None) -> Asker:
        return Asker(user=user, channel=channel)
