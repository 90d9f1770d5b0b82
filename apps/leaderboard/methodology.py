"""The methodology page: docs/methodology.md, written once in the repository, rendered here."""

from functools import cache
from pathlib import Path

import markdown
from django.conf import settings
from django.utils.safestring import SafeString, mark_safe

SOURCE = Path(settings.BASE_DIR) / "docs" / "methodology.md"


@cache
def methodology_html() -> SafeString:
    # attr_list gives each heading the stable anchor written in the file ({#slo}), which the
    # pages link to; the file is ours (in the repository), so its HTML is trusted.
    text = SOURCE.read_text(encoding="utf-8")
    return mark_safe(markdown.markdown(text, extensions=["attr_list", "tables", "fenced_code"]))
