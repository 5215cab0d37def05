"""The backend's messages to the visitor (a bad upload, unusable labels, a wrong file) in the visitor's language.

The backend raises them as `core.errors.UserError`s, each with a code and its details; the page shows them through
`context.user_errors` and the answer panels, which pass each through `translated_error`: the visitor's template for
the code ("error.<code>" in `strings`) filled with the same details. Any other error is shown as it is: an English
message is still better than none.
"""

from __future__ import annotations

from icr_app.app.i18n import say
from icr_app.core.errors import UserError
from icr_app.methods.base import BuildError


def translated_error(err: Exception) -> str:
    """What `err` says, in the visitor's language; a method that could not be built says why it could not."""
    if isinstance(err, BuildError):
        err = err.cause
    if isinstance(err, UserError):
        return say(f"error.{err.code}", **err.params)
    return str(err)
