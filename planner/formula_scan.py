"""Screening of formula text for what must never be evaluated: external references, DDE channels and functions
that reach outside the workbook. Pure, stdlib only, and linear in the length of the formula (a 60 KB hostile
formula takes milliseconds): every pattern here either consumes what it scans or starts only at a token boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HOSTILE_FUNCTIONS = frozenset({"WEBSERVICE", "CALL", "EXEC", "REGISTER", "REGISTER.ID", "RTD", "HYPERLINK", "IMAGE",
                               "FILTERXML"})
"""Functions that fetch from the network, call a DLL, run a program or open a link: never evaluated."""

_STRING = re.compile(r'"[^"]*(?:""[^"]*)*"')
"""A string literal (``""`` escapes a quote): unrolled, so it never backtracks."""
_QUOTED = re.compile(r"'[^']*(?:''[^']*)*'")
"""A quoted sheet or book name (``''`` escapes a quote)."""
_FUNCTION = re.compile(r"(?<![A-Za-z0-9_.\\])([A-Za-z_\\][A-Za-z0-9_.]*)\(")
"""A function name before ``(``, starting only where a name can start."""
_BOOK = re.compile(r"\[([^\[\]]*)\][^!\[\]\"'(),;=<>&+*/^ -]*'?!")
"""``[1]Sheet!``, ``[book.xlsx]Sheet!`` or ``[1]!Name``: a bracketed book before a sheet and ``!``."""
_URL = re.compile(r"(?:https?|file|ftp|smb)://", re.I)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.")
_PREFIXES = ("_XLFN._XLWS.", "_XLFN.", "_XLWS.", "_XLL.")


@dataclass(frozen=True, kw_only=True)
class FormulaScan:
    """What :func:`scan` found in one formula."""

    external: str | None = None
    """The external workbook (``[1]``, ``[book.xlsx]``) or URL the formula refers to."""
    dde: str | None = None
    """The DDE application (``cmd|``) the formula calls."""
    functions: frozenset[str] = frozenset()
    """Every function name called, upper case, without ``_xlfn.``-style prefixes."""

    @property
    def hostile_functions(self) -> list[str]:
        return sorted(self.functions & HOSTILE_FUNCTIONS)


def strip_strings(formula: str) -> str:
    """``formula`` with every string literal emptied.

    >>> strip_strings('A1&"[1]x!|"&B1')
    'A1&""&B1'
    """
    return _STRING.sub('""', formula) if '"' in formula else formula


def scan(formula: str) -> FormulaScan:
    """Screen one formula (with or without the leading ``=``).

    >>> scan("cmd|' /C calc'!A0").dde
    'cmd|'
    >>> scan("'../[secret.xlsx]S'!A1").external
    '[secret.xlsx]'
    >>> scan('_xlfn.WEBSERVICE("http://x")&A1').hostile_functions
    ['WEBSERVICE']
    >>> scan('"[1]x!"&A1&"a|b"') == FormulaScan(functions=frozenset())
    True
    """
    bare = strip_strings(formula)
    external = None
    m = _BOOK.search(bare)
    if m:
        external = f"[{m.group(1)}]"
    else:
        u = _URL.search(bare)
        if u:
            external = bare[u.start():u.start() + 80].split("'")[0]
    dde = None
    unquoted = _QUOTED.sub("''", bare) if "'" in bare else bare
    pipe = unquoted.find("|")
    if pipe != -1:
        start = pipe
        while start > 0 and unquoted[start - 1] in _NAME_CHARS:  # backwards over the application name
            start -= 1
        dde = unquoted[start:pipe] + "|"
    functions = set()
    for name in _FUNCTION.findall(unquoted):
        name = name.upper()
        for p in _PREFIXES:
            if name.startswith(p):
                name = name[len(p):]
                break
        functions.add(name)
    return FormulaScan(external=external, dde=dde, functions=frozenset(functions))


def external_reference(formula: str) -> str | None:
    """The external workbook or DDE target a formula refers to, or ``None`` (see :func:`scan`).

    >>> external_reference("[1]Sheet1!A1+1")
    '[1]'
    >>> external_reference("Table1[1]+T[[#This Row],[a]]") is None
    True
    """
    s = scan(formula)
    return s.dde or s.external
