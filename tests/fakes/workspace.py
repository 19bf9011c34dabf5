"""The one fake workspace every fake and request builder agrees on."""
from __future__ import annotations

TEAM_ID = "T0001"
TEAM_DOMAIN = "gpubot-test"
TEAM_NAME = "gpubot test workspace"
TEAM_URL = "https://gpubot-test.slack.com/"
APP_ID = "A0GPUBOT"
BOT_USER_ID = "U0BOT"
BOT_USER_NAME = "gpubot"
BOT_ID = "B0BOT"
BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-1-A0GPUBOT-1-test-app-token"
SIGNING_SECRET = "test-signing-secret"
VERIFICATION_TOKEN = "verification_token"


def name_from_id(object_id: str) -> str:
    """``U0ALICE`` -> ``alice``, ``C0TRAIN`` -> ``train``: readable names for fake users and channels."""
    return object_id[2:].lower() if len(object_id) > 2 else object_id.lower()
