"""Fix snippets: Jinja2 templates under ``playbooks/templates/`` rendered with StrictUndefined.

A template's first line may be a Jinja comment ``{# summary: ... #}``: the fix summary, itself a
template. A missing variable is a bug in the caller and raises, never renders as an empty string.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playbooks.model import Fix

if TYPE_CHECKING:
    import jinja2

TEMPLATE_DIR = Path(__file__).parent / "templates"
_SUMMARY = re.compile(r"^\{#\s*summary:\s*(?P<summary>.*?)\s*#\}\s*\n", re.S)
_LANGUAGES = {".yaml": "yaml", ".json": "json", ".sh": "shell", ".txt": "text"}


# Jinja2 and PyYAML are imported when the first fix is rendered, not with this module: `gpubot explain`
# on a paste with nothing to fix starts that much sooner.


@lru_cache(maxsize=1)
def _plain_dumper() -> type:
    import yaml

    class PlainDumper(yaml.SafeDumper):
        """No &anchors / *aliases: a snippet that repeats a block (Master and Worker) spells it out twice."""

        def ignore_aliases(self, data: Any) -> bool:
            return True

    return PlainDumper


def _to_yaml(value: Any, indent: int = 0) -> str:
    import yaml

    text = yaml.dump(value, Dumper=_plain_dumper(), default_flow_style=False, sort_keys=False).rstrip("\n")
    pad = " " * indent
    return "\n".join(pad + line if i else line for i, line in enumerate(text.splitlines()))


@lru_cache(maxsize=1)
def environment() -> "jinja2.Environment":
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["to_yaml"] = _to_yaml
    env.filters["to_json"] = lambda v: json.dumps(v)
    env.filters["quote"] = lambda v: json.dumps(str(v))
    return env


def template_names() -> list[str]:
    return sorted(environment().list_templates(filter_func=lambda n: n.endswith(".j2")))


def language_of(name: str) -> str:
    stem = name[: -len(".j2")] if name.endswith(".j2") else name
    return _LANGUAGES.get(Path(stem).suffix, "text")


def render_fix(template: str, /, **context: Any) -> Fix:
    """Render ``template`` (e.g. ``"toleration.yaml.j2"``) into a Fix."""
    env = environment()
    source, _, _ = env.loader.get_source(env, template)
    match = _SUMMARY.match(source)
    summary = env.from_string(match.group("summary")).render(**context) if match else ""
    snippet = env.get_template(template).render(**context).strip("\n") + "\n"
    return Fix(summary=summary, snippet=snippet, language=language_of(template))
