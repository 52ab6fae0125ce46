"""User-facing error types: each message names what was wrong and what was expected."""


class ForecasterError(Exception):
    """Base of every error the CLI prints as one line and the service answers as 4xx."""


class DataError(ForecasterError, ValueError):
    """A CSV, dataset or split that cannot be used as asked (names file, column, row, expectation)."""


class ConfigError(ForecasterError, ValueError):
    """A setting, option or name that is out of range or unknown (names the setting and what it accepts)."""


class BundleError(ForecasterError):
    """A model bundle that is missing, incomplete, invalid, or would be overwritten."""
