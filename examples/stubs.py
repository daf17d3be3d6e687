"""Stubs for ``mercury-lsp refactor fill examples/stubs.py`` (see README, "Batch refactors")."""

from abc import ABC, abstractmethod


def clamp(value, low, high):
    """Return value limited to the range [low, high]."""
    ...


def is_palindrome(text):
    """True when text reads the same backwards."""
    pass  # TODO


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    raise NotImplementedError


def words(line):
    # TODO: split line on whitespace and return the list of words
    return []


class Shape(ABC):
    @abstractmethod
    def area(self):
        ...
