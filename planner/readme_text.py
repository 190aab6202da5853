"""The ReadMe sheet's section on the add-in: which one to install, and what a cell shows before it is installed.

Kept apart from the template builder so the text can change without touching the workbook layout;
:func:`with_addin_section` places it right after the title lines, before "How to fill it".
"""

from __future__ import annotations

ADDIN_LINES: tuple[tuple[str, str], ...] = (
    ("head", "Before you start: the planner functions need an add-in to recalculate"),
    ("", "The grey cells call the planner's functions (=CAPACITY_TPM(...), =KV_FIT(...), ...). Their values were "
         "computed by the planner when this file was written and are saved in it, so a viewer, a preview or a "
         "reader shows the numbers with no add-in and no Python on the machine."),
    ("", "Excel recalculates this workbook when it opens it. Until an add-in provides the functions, every cell "
         "that calls one shows #NAME? (and the cells that depend on it show #NAME? too). Nothing is lost: install "
         "an add-in below, then recalculate (Ctrl+Alt+F9). Do not type over those cells."),
    ("", "Excel on Windows, macOS or the web, no Python needed: xlwings Lite (free, also for commercial use). "
         "Home > Add-ins, search 'xlwings', Add. In the xlwings Lite pane, put the lines of requirements.txt of the "
         "llm-capacity-planner Lite bundle (attached to each release with main.py; or written by planner addin lite) "
         "in the requirements.txt tab and its main.py in the main.py tab; the functions are there once the install "
         "log finishes. Lite saves both in the workbook, so this is done once per workbook."),
    ("", "Windows desktop Excel with a local Python: the classic xlwings add-in. pip install "
         "'llm-capacity-planner[excel]', then planner addin --user-config, xlwings addin install, and on the "
         "xlwings ribbon tab click Import Functions; keep the file as .xlsm."),
    ("", "A cell that shows a sentence (e.g. peak_qps: got 'lots', expected a number) is the planner's message "
         "for the argument at fault; fix that input."),
)


def with_addin_section(lines: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """``lines`` with :data:`ADDIN_LINES` inserted before the first heading.

    >>> with_addin_section((("title", "T"), ("", "v"), ("head", "H")))[2] == ADDIN_LINES[0]
    True
    """
    first_head = next((i for i, (style, _) in enumerate(lines) if style == "head"), len(lines))
    return lines[:first_head] + ADDIN_LINES + lines[first_head:]
