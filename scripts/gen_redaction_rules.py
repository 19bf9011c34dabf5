"""Write playbooks/redaction/data/gitleaks.json: gitleaks' secret rules as a table gpubot's redaction runs.

    .venv/bin/python scripts/gen_redaction_rules.py [--out DIR] [--refresh] [--mirrors DIR] [--tag TAG]

Input (checked in, no network needed): scripts/redaction/upstream/gitleaks.toml, gitleaks' default rule
set (config/gitleaks.toml of github.com/gitleaks/gitleaks, MIT licence) verbatim at the tag named in
scripts/redaction/upstream/gitleaks.json, which also holds the examples each rule's generator
(cmd/generate/config/rules/*.go) validates it with: the true positives gitleaks must find and the
false positives it must not, as literal strings or as recipes (``utils.GenerateSampleSecrets(id,
secret)``, a secret drawn from a regex by ``secrets.NewSecret``) that the tests draw afresh.

gitleaks' patterns are Go RE2; gpubot runs every pattern through ``playbooks.linear.compile`` (RE2), so a
rule is kept when its regex, and its allowlists' regexes, compile there. Dropped, with the reason
printed and written: rules with no regex (they match file names only) and rules that apply only to
files of a named path (``path``): gpubot redacts text, not files.

After a gitleaks release: ``fetch`` github:gitleaks/gitleaks (a mirror under /work/.mirror), run with
--refresh (newest release tag, or --tag) to rewrite both snapshots from the mirror, then run this script,
read the counts and the dropped rules, and commit the snapshots and the table together.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playbooks import linear  # noqa: E402 - after the path is set, as a script

UPSTREAM = ROOT / "scripts" / "redaction" / "upstream"
OUT = ROOT / "playbooks" / "redaction" / "data"
MIRRORS = Path("/work/.mirror")
REPO = "gitleaks/gitleaks"
RULES_DIR = "cmd/generate/config/rules"
UTILS_FILE = "cmd/generate/config/utils/generate.go"
GENERATOR = "scripts/gen_redaction_rules.py"


def table(toml_text: str, source: dict) -> dict:
    """The table: every rule gpubot can run, the global allowlist, and what was dropped and why."""
    config = tomllib.loads(toml_text)
    rules, dropped = [], []
    for rule in config["rules"]:
        reason = _unusable(rule)
        if reason:
            dropped.append({"id": rule["id"], "reason": reason})
            continue
        rules.append({
            "id": rule["id"],
            "regex": rule["regex"],
            "secret_group": rule.get("secretGroup", 0),
            "entropy": rule.get("entropy", 0),
            "keywords": sorted({k.lower() for k in rule.get("keywords", [])}),
            "allowlists": [_allowlist(a) for a in rule.get("allowlists", []) if _applies_to_text(a)],
        })
    glob = config.get("allowlist", {})
    return {
        "source": f"github.com/{REPO} config/gitleaks.toml (MIT)",
        "tag": source["tag"],
        "commit": source["commit"],
        "generator": GENERATOR,
        "allowlist": {"regexes": [r for r in glob.get("regexes", []) if _compiles(r)],
                      "stopwords": sorted({s.lower() for s in glob.get("stopwords", [])})},
        "dropped": dropped,
        "rules": rules,
    }


def _unusable(rule: dict) -> str | None:
    if "regex" not in rule:
        return "no regex: matches file names only"
    if "path" in rule:
        return f"applies only to files matching {rule['path']!r}; gpubot redacts text, not files"
    for pattern in [rule["regex"]] + [r for a in rule.get("allowlists", []) for r in a.get("regexes", [])]:
        try:
            linear.compile(pattern)
        except ValueError as error:
            return f"does not compile for RE2 here: {error}"
    return None


def _compiles(pattern: str) -> bool:
    try:
        linear.compile(pattern)
    except ValueError:
        return False
    return True


def _applies_to_text(allowlist: dict) -> bool:
    """An allowlist that needs a path or a commit to match (condition AND) can never match a text."""
    needs_file = "paths" in allowlist or "commits" in allowlist
    return not (needs_file and allowlist.get("condition", "OR").upper() == "AND") and (
        "regexes" in allowlist or "stopwords" in allowlist)


def _allowlist(allowlist: dict) -> dict:
    return {"target": allowlist.get("regexTarget", "secret"), "regexes": allowlist.get("regexes", []),
            "stopwords": sorted({s.lower() for s in allowlist.get("stopwords", [])})}


# --- the refresh: snapshots from a mirror of gitleaks/gitleaks ------------------------------------------

def refresh(mirrors: Path, tag: str | None) -> None:
    git_dir = mirrors / REPO.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        sys.exit(f"no mirror of {REPO} under {mirrors}: fetch github:{REPO} first")

    def git(*args: str) -> str:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True,
                              check=True).stdout

    tag = tag or next(t for t in git("tag", "--sort=-v:refname").split() if re.fullmatch(r"v\d+\.\d+\.\d+", t))
    commit = git("rev-parse", f"{tag}^{{commit}}").strip()
    (UPSTREAM / "gitleaks.toml").write_text(git("show", f"{tag}:config/gitleaks.toml"))
    examples, unread = {}, 0
    for name in sorted(git("ls-tree", "--name-only", f"{tag}:{RULES_DIR}").split()):
        if name.endswith(".go") and not name.endswith("_test.go"):
            found, skipped = go_examples(git("show", f"{tag}:{RULES_DIR}/{name}"))
            examples.update(found)
            unread += skipped
    templates = sample_templates(git("show", f"{tag}:{UTILS_FILE}"))
    snapshot = {"repo": REPO, "tag": tag, "commit": commit, "rules_dir": RULES_DIR,
                "sample_templates": templates, "examples_unread": unread, "examples": dict(sorted(examples.items()))}
    (UPSTREAM / "gitleaks.json").write_text(json.dumps(snapshot, indent=1, ensure_ascii=False) + "\n")
    print(f"snapshot {tag} ({commit[:12]}): examples of {len(examples)} rules, {unread} unread")


_FUNC = re.compile(r"^func ", re.M)
_RULE_ID = re.compile(r'RuleID:\s*"([^"]+)"')
_ASSIGN = re.compile(r"^\s*(tps|fps)\s*(:?=)\s*", re.M)
# The helpers of cmd/generate/config/utils/patterns.go, as the regexes they return.
_CLASSES = {"Hex": "[a-f0-9]{%s}", "Numeric": "[0-9]{%s}", "AlphaNumeric": "[a-z0-9]{%s}",
            "AlphaNumericExtendedShort": "[a-z0-9_-]{%s}", "AlphaNumericExtended": r"[a-z0-9=_\-]{%s}",
            "AlphaNumericExtendedLong": r"[a-z0-9\/=_\+\-]{%s}"}


def sample_templates(source: str) -> dict[str, str]:
    """``utils.GenerateSampleSecrets``' templates ({i} identifier, {I} upper-cased, {s} the secret), by
    the name upstream gives each; commented-out (TODO) ones are left out, as they are upstream."""
    body = source[source.index("func GenerateSampleSecrets("):]
    body = body[:body.index("replacer :=")]
    out = {}
    for match in re.finditer(r'^\s*("[^"\n]*"):\s*', body, re.M):
        key = ast.literal_eval(match.group(1))
        out[key] = _Expr(body, match.end()).string()
    return dict(sorted(out.items()))


class Unreadable(Exception):
    """A Go expression this reader does not evaluate (a loop, a helper of its own)."""


def go_examples(source: str) -> tuple[dict, int]:
    """Per rule id, the ``tps`` and ``fps`` a rules/*.go function validates its rule with; and how many
    statements could not be read."""
    out, unread = {}, 0
    for body in _FUNC.split(source)[1:]:
        rule = _RULE_ID.search(body)
        if not rule:
            continue
        lists: dict[str, list] = {"tps": [], "fps": []}
        for match in _ASSIGN.finditer(body):
            try:
                value, _ = _Expr(body, match.end()).parse()
                items = value if isinstance(value, list) else None
                if items is None:
                    raise Unreadable(body[match.end():match.end() + 60])
                if match.group(2) == ":=":
                    lists[match.group(1)] = []
                lists[match.group(1)].extend(i for i in items if i is not None)
                unread += sum(1 for i in items if i is None)
            except Unreadable:
                unread += 1
        if lists["tps"] or lists["fps"]:
            out[rule.group(1)] = lists
    return out, unread


class _Expr:
    """A reader for the few Go expressions the rule files build examples from: string literals and
    their concatenation, ``[]string{...}``, ``append(x, ...)``, the sample and secret helpers. An
    example is a string, or a recipe {"sample": id, "secret": parts} / {"parts": parts} where parts
    are ["lit", text] or ["regex", pattern]; an element that cannot be read is None."""

    def __init__(self, text: str, at: int) -> None:
        self.text, self.at = text, at

    def parse(self):
        return self.expr(), self.at

    def skip(self) -> None:
        while True:
            while self.at < len(self.text) and self.text[self.at] in " \t\r\n":
                self.at += 1
            if self.text.startswith("//", self.at):
                self.at = self.text.find("\n", self.at)
                self.at = len(self.text) if self.at < 0 else self.at
                continue
            return

    def expr(self):
        parts = [self.term()]
        self.skip()
        while self.text.startswith("+", self.at):
            self.at += 1
            parts.append(self.term())
            self.skip()
        if len(parts) == 1:
            return parts[0]
        return {"parts": [p for part in parts for p in _as_parts(part)]}

    def term(self):
        self.skip()
        ch = self.text[self.at:self.at + 1]
        if ch in ('"', "`"):
            return self.string()
        if self.text.startswith("[]string{", self.at):
            self.at += len("[]string{")
            return self.elements("}")
        name = re.match(r"[A-Za-z_][\w.]*", self.text[self.at:])
        if not name or not self.text.startswith("(", self.at + name.end()):
            raise Unreadable(self.text[self.at:self.at + 40])
        self.at += name.end() + 1
        args = self.elements(")")
        return self.call(name.group(0), args)

    def elements(self, close: str) -> list:
        items = []
        while True:
            self.skip()
            if self.text.startswith(close, self.at):
                self.at += 1
                return items
            start = self.at
            try:
                item = self.expr()
            except Unreadable:
                self.at = start
                self.skip_element(close)
                item = None
            self.skip()
            if self.text.startswith("...", self.at):
                self.at += 3
                items.extend(item if isinstance(item, list) else [None])
            else:
                items.append(item)
            self.skip()
            if self.text.startswith(",", self.at):
                self.at += 1

    def skip_element(self, close: str) -> None:
        depth = 0
        while self.at < len(self.text):
            ch = self.text[self.at]
            if ch in "\"`":
                self.string()
                continue
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif ch == "," and depth == 0:
                return
            self.at += 1

    def string(self) -> str:
        quote = self.text[self.at]
        if quote == "`":
            end = self.text.index("`", self.at + 1)
            value = self.text[self.at + 1:end]
        else:
            end = self.at + 1
            while self.text[end] != '"':
                end += 2 if self.text[end] == "\\" else 1
            value = ast.literal_eval(self.text[self.at:end + 1])  # Go's escapes used here are Python's too
        self.at = end + 1
        return value

    def call(self, name: str, args: list):
        if name == "append" and args and args[0] is None:
            return args[1:]
        if name == "append":
            raise Unreadable(name)
        short = name.rsplit(".", 1)[-1]
        if short in _CLASSES and len(args) == 1 and isinstance(args[0], str):
            return {"parts": [["regex", _CLASSES[short] % args[0]]]}
        if short == "Hex8_4_4_4_12":
            return {"parts": [["regex", "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"]]}
        if short in ("NewSecret", "newPlausibleSecret") and len(args) == 1:
            value = args[0]
            if isinstance(value, str):
                return {"parts": [["regex", value]]}
            if isinstance(value, dict) and all(kind == "regex" for kind, _ in value["parts"]):
                return {"parts": [["regex", "".join(p for _, p in value["parts"])]]}
            raise Unreadable(name)
        if short in ("GenerateSampleSecrets", "GenerateSampleSecret") and len(args) == 2 \
                and isinstance(args[0], str) and args[1] is not None:
            recipe = {"sample": args[0], "secret": _as_parts(args[1])}
            return [recipe] if short == "GenerateSampleSecrets" else {"one_sample": args[0], "secret": recipe["secret"]}
        raise Unreadable(name)


def _as_parts(value) -> list:
    if isinstance(value, str):
        return [["lit", value]]
    if isinstance(value, dict) and "parts" in value:
        return value["parts"]
    raise Unreadable(repr(value)[:40])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--refresh", action="store_true", help="rewrite the snapshots from the mirror first")
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--tag", help="with --refresh: this tag instead of the newest release")
    args = parser.parse_args(argv)
    if args.refresh:
        refresh(args.mirrors, args.tag)
    source = json.loads((UPSTREAM / "gitleaks.json").read_text())
    result = table((UPSTREAM / "gitleaks.toml").read_text(), source)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gitleaks.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"gitleaks {result['tag']}: {len(result['rules'])} rules kept, {len(result['dropped'])} dropped")
    for entry in result["dropped"]:
        print(f"  dropped {entry['id']}: {entry['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
