"""Fakes at the network edge: the Slack Web API, Socket Mode, and signed requests from Slack.

See ``tests/fakes/test_fakes.py`` for each in use, and ``tests/fixtures/slack/README.md`` for where the
request shapes come from.
"""
from .block_kit_limits import problems, view_problems
from .signing import Reply, SlackRequests, sign
from .slack_api import Call, FakeSlack
from .socket_mode import FakeSocketMode
from .workspace import APP_TOKEN, BOT_ID, BOT_TOKEN, BOT_USER_ID, SIGNING_SECRET, TEAM_ID

__all__ = [
    "APP_TOKEN", "BOT_ID", "BOT_TOKEN", "BOT_USER_ID", "Call", "FakeSlack", "FakeSocketMode", "Reply", "SIGNING_SECRET",
    "SlackRequests", "TEAM_ID", "problems", "sign", "view_problems",
]
