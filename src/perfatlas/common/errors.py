"""The one exception type that reaches the user as a single sentence and a non-zero exit."""

# Characters that would break the sentence over lines (str.splitlines' separators and the other
# control characters) are shown escaped: a value a user typed, echoed back, stays on one line.
_ESCAPES = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in (*range(0x20), 0x7F, 0x85, 0x2028, 0x2029)
}
_ESCAPES.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): " "})


def one_line(text: object) -> str:
    """`text` with the characters that would break it over lines shown escaped."""
    return str(text).translate(_ESCAPES)


class UserError(Exception):
    """Bad input or an unmet requirement: printed as one sentence, exit status 2."""

    def __init__(self, message: object = "", *args: object):
        super().__init__(one_line(message), *args)
