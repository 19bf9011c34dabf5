"""Fix snippets: Jinja2 templates under ``playbooks/templates/`` rendered with StrictUndefined.

A template's first line may be a Jinja comment ``{# summary: ... #}``: the fix summary, itself a
template. A missing variable is a bug in the caller and raises, never renders as an empty string.

Values come from cluster objects, logs and pastes, so they are tenant input. One environment per output
language writes every ``{{ expression }}`` in that language's syntax (its ``finalize``): a shell word in
``.sh`` templates, a YAML scalar in ``.yaml``, a JSON value in ``.json``, one line of text in summaries.
A template opts out only through a filter that writes for its position itself: ``to_yaml`` / ``to_json``
(a whole block), ``sh`` (a shell word, for commands quoted in YAML comments), ``text`` (prose in a
comment). A value of a known kind that is not valid becomes a placeholder, and the snippet says why
(``playbooks.fix_values``).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playbooks.fix_values import (Placeholder, Rendered, check_values, json_value, one_line, shell_word, text_line,
                                  yaml_scalar)
from playbooks.model import Fix

if TYPE_CHECKING:
    import jinja2

TEMPLATE_DIR = Path(__file__).parent / "templates"
_SUMMARY = re.compile(r"^\{#\s*summary:\s*(?P<summary>.*?)\s*#\}\s*\n", re.S)
_LANGUAGES = {".yaml": "yaml", ".json": "json", ".sh": "shell", ".txt": "text"}
_FINALIZE = {"shell": shell_word, "yaml": yaml_scalar, "json": json_value, "text": text_line}


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


def _to_yaml(value: Any, indent: int = 0) -> Rendered:
    import yaml

    text = yaml.dump(value, Dumper=_plain_dumper(), default_flow_style=False, sort_keys=False,
                     allow_unicode=False).rstrip("\n")
    pad = " " * indent
    return Rendered("\n".join(pad + line if i else line for i, line in enumerate(text.splitlines())))


@lru_cache(maxsize=None)
def environment(language: str = "text") -> "jinja2.Environment":
    """The environment for templates written in ``language`` ("shell", "yaml", "json" or "text")."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        finalize=_FINALIZE[language],
    )
    # Jinja's namespace() global would stand in for a missing ``namespace`` value (and render as its class
    # name): without it, an unknown namespace is undefined like any other value.
    env.globals.pop("namespace", None)
    env.filters["to_yaml"] = _to_yaml
    env.filters["to_json"] = json_value
    env.filters["quote"] = _FINALIZE[language]
    env.filters["sh"] = shell_word
    env.filters["text"] = text_line
    return env


def template_names() -> list[str]:
    return sorted(environment().list_templates(filter_func=lambda n: n.endswith(".j2")))


def language_of(name: str) -> str:
    stem = name[: -len(".j2")] if name.endswith(".j2") else name
    return _LANGUAGES.get(Path(stem).suffix, "text")


def render_fix(template: str, /, **context: Any) -> Fix:
    """Render ``template`` (e.g. ``"toleration.yaml.j2"``) into a Fix."""
    language = language_of(template)
    env = environment(language)
    source, _, _ = env.loader.get_source(env, template)
    values = check_values(context)
    match = _SUMMARY.match(source)
    summary = environment("text").from_string(match.group("summary")).render(**values) if match else ""
    snippet = env.get_template(template).render(**values).strip("\n") + "\n"
    return Fix(summary=summary, snippet=_with_notes(snippet, template, values, language), language=language)


def _with_notes(snippet: str, template: str, values: dict[str, Any], language: str) -> str:
    """Say, in a comment, which placeholder stands for a value the input did not hold validly. Shell: first,
    where it is read before pasting; YAML: last, after the comment that says what the document is."""
    read = _names_read(template)
    notes = [f"# {v}: {one_line(v.reason)}" for k, v in values.items() if k in read and isinstance(v, Placeholder)]
    if not notes or language not in ("shell", "yaml"):
        return snippet
    block = "\n".join(notes) + "\n"
    return block + snippet if language == "shell" else snippet + block


@lru_cache(maxsize=None)
def _names_read(template: str) -> frozenset[str]:
    """The variables a template's body reads ("namespace" too, which is also a Jinja global)."""
    from jinja2 import nodes

    env = environment()
    return frozenset(n.name for n in env.parse(env.loader.get_source(env, template)[0]).find_all(nodes.Name))
