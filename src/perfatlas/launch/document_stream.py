"""The documents of a native launch as they arrive on its standard output (docs/contract.md,
Series).

A launch writes one JSON document, or one JSON list of documents whose elements the native
writer flushes one by one (native/common/json.c). The growing text is cut with
json.JSONDecoder.raw_decode: each list element is handed out as soon as it is whole, so that a
series whose process dies later keeps its finished points. What is handed out is exactly what
json.loads of the whole output gives, element by element; a single document (no list) comes
out when the output ends (finish). Every character is parsed once.
"""

from __future__ import annotations

import json

_DECODER = json.JSONDecoder()
_BLANK = " \t\r\n"


class DocumentStream:
    """Feed it the output text piece by piece; it returns each list element once it is whole."""

    def __init__(self) -> None:
        self.text = ""
        self.position = 0  # where the next element (or the separator before it) starts
        self.is_list: bool | None = None  # unknown until the first character that is not blank
        self.elements = 0

    def feed(self, text: str) -> list[dict]:
        """Add output; the list elements it completes (none while the output is one document)."""
        self.text += text
        if self.is_list is None:
            start = len(self.text) - len(self.text.lstrip(_BLANK))
            if start == len(self.text):
                return []
            self.is_list = self.text[start] == "["
            self.position = start + 1
        if not self.is_list:
            return []
        found = []
        while (position := self._element_start()) is not None:
            try:
                element, end = _DECODER.raw_decode(self.text, position)
            except json.JSONDecodeError:
                return found  # not whole yet (or malformed: finish says so at the end)
            if end == len(self.text) and not isinstance(element, dict | list):
                return found  # a number may go on in the next piece
            found.append(element)
            self.elements += 1
            self.position = end
        return found

    def finish(self) -> dict | list:
        """At the end of the output: the single document, or the list elements not handed out
        yet; json.JSONDecodeError when the output is not one whole JSON document or list."""
        if not self.is_list:
            return json.loads(self.text)  # one document (or nothing): parsed here, once
        rest = self.feed("")
        position = self._past_blanks(self.position)
        if self.text.startswith("]", position):
            if self.text[position + 1 :].strip(_BLANK):
                raise json.JSONDecodeError("Extra data", self.text, position + 1)
            return rest
        if self.elements:
            if not self.text.startswith(",", position):
                raise json.JSONDecodeError("Expecting ',' delimiter", self.text, position)
            position = self._past_blanks(position + 1)
        _DECODER.raw_decode(self.text, position)  # raises: the element is malformed or cut off
        raise json.JSONDecodeError("Expecting ',' delimiter or ']'", self.text, position)

    def _element_start(self) -> int | None:
        """Where the next element starts; None at the list's end, before its text has arrived,
        or where the ',' between two elements is missing (finish then says what is wrong)."""
        position = self._past_blanks(self.position)
        if self.elements:
            if not self.text.startswith(",", position):
                return None
            position = self._past_blanks(position + 1)
        if position >= len(self.text) or self.text[position] == "]":
            return None
        return position

    def _past_blanks(self, position: int) -> int:
        while position < len(self.text) and self.text[position] in _BLANK:
            position += 1
        return position
