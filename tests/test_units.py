import pytest

from perfatlas.common.errors import UserError
from perfatlas.common.units import (
    format_cpu_list,
    format_size,
    format_value,
    parse_cpu_list,
    parse_duration,
    parse_size,
)


@pytest.mark.parametrize(
    "text, value",
    [
        ("4096", 4096),
        ("64KiB", 65536),
        ("1GiB", 2**30),
        ("256MiB", 2**28),
        ("2M", 2**21),
        ("1.5KiB", 1536),
        ("1GB", 10**9),
    ],
)
def test_sizes_take_binary_and_si_suffixes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "1 furlong", "KiB", "0.3B", "-4KiB"])
def test_bad_sizes_are_one_clear_sentence(text):
    with pytest.raises(UserError, match="size|whole number"):
        parse_size(text)


def test_durations():
    assert parse_duration("10s") == 10.0
    assert parse_duration("20ms") == pytest.approx(0.02)
    assert parse_duration("3") == 3.0
    with pytest.raises(UserError, match="not a duration"):
        parse_duration("soon")


def test_cpu_lists_round_trip():
    assert parse_cpu_list("0-2,5") == [0, 1, 2, 5]
    assert format_cpu_list([5, 0, 1, 2]) == "0-2,5"
    with pytest.raises(UserError, match="descending"):
        parse_cpu_list("3-1")
    with pytest.raises(UserError, match="not a CPU list"):
        parse_cpu_list("a,b")


def test_formatting_uses_si_for_rates_and_binary_for_sizes():
    assert format_value(2.31e10, "byte/s") == "23.1 GB/s"
    assert format_value(85.0, "ns") == "85 ns"
    assert format_size(2**30) == "1 GiB"
    assert format_size(1536) == "1.5 KiB"
