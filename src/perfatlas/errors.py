"""The one exception type that reaches the user as a single sentence and a non-zero exit."""


class UserError(Exception):
    """Bad input or an unmet requirement: printed as one sentence, exit status 2."""
