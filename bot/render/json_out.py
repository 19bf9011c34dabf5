"""The --json contract (design.md, "Diagnosis JSON")."""
from __future__ import annotations

import json

from playbooks.model import Diagnosis


def render(diagnosis: Diagnosis) -> str:
    return json.dumps(diagnosis.to_dict(), indent=2, ensure_ascii=False)


def render_error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)
