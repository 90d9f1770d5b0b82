"""The one base of the domain errors a service raises for input it refuses, naming the field.

Pure Python (the cost formulas import it): the API maps every subclass in one handler
(apps.api.api), with the subclass's `status`.
"""


class FieldRefused(ValueError):
    """An input a service refuses: `field` names what is wrong, `message` says why. The API
    answers `status` with its one error body; pages show "field: message"."""

    status = 422

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
