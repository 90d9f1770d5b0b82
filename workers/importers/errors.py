"""The one error every importer raises: a message a person can act on."""

from __future__ import annotations


class ImportFailure(ValueError):
    """A peer file (or the facts given with it) cannot become a result document.

    The message names the file, the field and what was wrong, so a CLI can print it as is
    and an API can return it as a 4xx body.
    """
