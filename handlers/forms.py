"""Opening a form (modal) from the ack step, with its metadata sealed: the trigger lives 3 s."""
from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from handlers.deps import Deps

log = logging.getLogger(__name__)


def open_sealed_form(client: WebClient, deps: Deps, *, trigger_id: str, view: dict, action: str,
                     again: str) -> str | None:
    """Open ``view`` with its private_metadata sealed for ``action``; None when it opened, else the one
    line to tell the person (``again``: what to do then)."""
    view["private_metadata"] = deps.signer.seal(view["private_metadata"], action=action, conversation=None)
    try:
        client.views_open(trigger_id=trigger_id, view=view)
    except (SlackApiError, OSError) as exc:  # OSError: Slack unreachable or too slow
        error = exc.response.get("error") if isinstance(exc, SlackApiError) else "no answer"
        log.warning("a form (%s) did not open: %s", action, error)
        return f"Slack did not open the form ({error}): {again}"
    return None
