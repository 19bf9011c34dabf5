"""Passwords in two login forms no rule set covers: the MySQL/MariaDB clients' ``-pPASSWORD`` and a
netrc entry's ``password VALUE``.

Both are rules of our own: detect-secrets' KeywordDetector wants a separator (``=``, ``:``) after the
word, gitleaks' generic rule wants one too, and neither knows a password glued to its flag.
"""
from __future__ import annotations

from collections.abc import Iterator

import re2

from playbooks.redaction.spans import Span, harmless

# The clients' short option takes its value glued on, never after a blank ("-p" alone prompts):
# https://dev.mysql.com/doc/refman/8.4/en/connection-options.html#option_general_password and
# https://mariadb.com/kb/en/mariadb-command-line-client/ (-p, --password[=passwd]). Only after a MySQL or
# MariaDB client's name on the line, since -pVALUE means a port, a parent directory or a profile to
# other tools (ssh -p2222, mkdir -p, docker -p8080:80). -P (capital) is the port, so the flag is
# case-sensitive.
_MYSQL = re2.compile(r"""\b(?i:mysql|mariadb)[\w-]*(?:\s+\S+)*?\s-p('[^']*'|"[^"]*"|[^\s'"]\S*)""")
# A netrc entry (https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html;
# curl's netrc.c reads the same tokens): "machine HOST" or "default", then login/account/port and
# password tokens in any order, separated by blanks; curl accepts a quoted value.
_NETRC = re2.compile(r"""\b(?:machine\s+\S+|default)(?:\s+(?:login|account|port)\s+\S+)*\s+password\s+("[^"]*"|[^\s"']+)""")


def spans(line: str) -> Iterator[Span]:
    lowered = line.lower()
    if " -p" in line and ("mysql" in lowered or "mariadb" in lowered):
        for match in _MYSQL.finditer(line):
            yield from _value(line, match.span(1))
    if "password" in line and ("machine" in line or "default" in line):
        for match in _NETRC.finditer(line):
            yield from _value(line, match.span(1))


def _value(line: str, span: Span) -> Iterator[Span]:
    start, end = span
    if end - start >= 2 and line[start] in "'\"" and line[end - 1] == line[start]:
        start, end = start + 1, end - 1
    if end > start and not harmless(line[start:end]):
        yield start, end
