"""The reports' HTML pages, report.html and the scoreboard's index.html, from ``templates/``,
and the one way the reports escape HTML: jinja's autoescaping, with every value a template
writes first cleared of terminal colour codes and control characters.

Everything shown comes from test output, exception text or a run's files, which are
untrusted; a page is built only here, so no value reaches one unescaped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2

_TEMPLATES = Path(__file__).with_name("templates")

# Terminal colour codes are noise on a page; other control characters are not HTML.
_TERMINAL_CODES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        return _CONTROL.sub("\N{REPLACEMENT CHARACTER}", _TERMINAL_CODES.sub("", value))
    return value


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,  # every {{ }} is escaped, whatever the template's file name
        finalize=_printable,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(template: str, **values: Any) -> str:
    """``templates/<template>`` filled with ``values``, each escaped where it is written."""
    return _environment().get_template(template).render(**values)
