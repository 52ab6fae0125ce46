"""User-facing error types: each message names what was wrong and what was expected."""

from collections.abc import Sequence
from typing import Self

# Longest message an error keeps, whatever the file, bundle or request it echoes: room for the longest
# message written here (the reader's hints, about 300 characters, plus a file path), not for an echo.
MESSAGE_LIMIT = 500


def one_line(message: object, limit: int = MESSAGE_LIMIT) -> str:
    """`message` on one line of at most `limit` characters, its start and end kept.

    Errors echo what they were given (a value, a list of names), which a hostile or corrupted input makes
    megabytes long; the CLI prints the message and the service answers it (and its notes) on every call. The
    one clipping of the project's texts, within `limit` whatever it is.
    """
    text = " ".join(str(message).splitlines())
    if len(text) <= limit:
        return text
    marker = f" ... ({len(text) - limit} characters cut) ... "
    if limit < 2 * len(marker):  # a short label (a setting shown in a refusal): its start only
        return text[: max(limit - 3, 0)] + "..."[:limit]
    head = (limit - len(marker)) * 2 // 3
    return text[:head] + marker + text[len(text) - (limit - len(marker) - head) :]


def unimportable(package: str, error: ImportError) -> str:
    """Why `package` did not import, truly: "is not installed" only where it is itself missing; installed but
    missing something it imports (neuralforecast without Ray) it "cannot be imported (...)" (h140 F9)."""
    if isinstance(error, ModuleNotFoundError) and error.name == package:
        return "is not installed"
    return f"cannot be imported ({one_line(error)})"


class ForecasterWarning(UserWarning):
    """Something the user should act on that does not stop the command (a download with no checksum)."""


class DataQualityWarning(ForecasterWarning):
    """Something in a file that is usable but worth knowing (benchmark quirks, skipped or filled cells)."""


def warning_line(message: object, note: bool = False) -> str:
    """How the CLI shows one of the project's warnings: one line of its own, each of its notes ("; " apart)
    kept whole up to MESSAGE_LIMIT (a reader's several notes were cut mid-word). A note (a
    DataQualityWarning, which names its file and says "note:" itself) is not called a warning: it informs."""
    notes = " ".join(str(message).splitlines()).split("; ")  # one line, as one_line makes it
    prefix = "forecaster: " if note else "forecaster: warning: "
    return prefix + one_line("; ".join(one_line(part) for part in notes), 8 * MESSAGE_LIMIT)


class ForecasterError(Exception):
    """Base of every error the CLI prints as one line and the service answers as 4xx."""

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(one_line(message), *args)


class DataError(ForecasterError, ValueError):
    """A CSV, dataset or split that cannot be used as asked (names file, column, row, expectation)."""


class MissingColumnsError(DataError):
    """Columns asked for by name that a table lacks (`missing`; it has `present`, and a long table's series
    not asked for, `others`, which its reader left out), so a caller can say why they were wanted."""

    def __init__(
        self, message: str, missing: list[str], present: list[str], others: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.missing, self.present, self.others = missing, present, list(others)

    @classmethod
    def among(cls, head: str, missing: list[str], present: Sequence[object], hint: str = "") -> Self:
        """`<head>; columns are 'a', 'b'<hint>`: what was asked for and what the table has, said one way."""
        names = ", ".join(map(repr, present))
        return cls(f"{head}; columns are {names}{hint}", missing, list(map(str, present)))


class MissingSheetError(DataError):
    """A workbook without the sheet asked for by name or number; `listed` names its sheets, so that a caller
    that asked for a model's remembered sheet can say where the name came from."""

    def __init__(self, message: str, listed: str) -> None:
        super().__init__(message)
        self.listed = listed


class OneBlockError(DataError):
    """--periods, which chooses a block of a file of several frequencies (an ONS time series), given for a
    file of one: a model trained on such a block reads the block's own rows as they are (h75 F6)."""


class MissingDateColumnsError(MissingColumnsError):
    """The column(s) the dates were to be read from, absent. Its message suggests other ways to find the
    dates; the rows a trained model reads must have the columns its training data had (`prediction`)."""


class ConfigError(ForecasterError, ValueError):
    """A setting, option or name that is out of range or unknown (names the setting and what it accepts)."""


class BundleError(ForecasterError):
    """A model bundle that is missing, incomplete, invalid, or would be overwritten."""


class RefusedError(ForecasterError):
    """What the system refused (a full disk, a permission, a port in use): the CLI's exit status 1, as an
    OSError's, not the 2 of input or options refused (a script retrying on 1)."""


class WriteRefusedError(RefusedError):
    """What the system refused as a command wrote, nothing of it half-written."""


class CalibrationFileError(BundleError):
    """A bundle's calibration file cannot be used (`problem`); `forecaster calibrate` makes a new one."""

    def __init__(self, problem: str, folder: object) -> None:
        super().__init__(f"{problem}; make a new one with `forecaster calibrate --model {folder} --csv FILE`")
        self.problem = problem
