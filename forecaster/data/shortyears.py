"""Months written with a two-digit year other than Excel's "Jan-22": "Jan 22", "Jan '22", "January 22",
"Jan20", "22-Jan" and "01/22" (h75 F2). Each also reads as a day of a month without its year (January 22),
which pandas dated in the year 1; they are read as months only where, so read, they step through the months
in order and are not all one month (a daily "Jan 01" ... "Jan 31" is no yearly series of Januaries)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

SHORT_YEAR_MONTHS = (
    re.compile(r"^(?P<month>[^\W\d_]{3,})\.?\s*['\u2019]?(?P<year>\d{2})$"),  # "Jan 22", "Jan '22", "Jan20"
    re.compile(r"^(?P<year>\d{2})-(?P<month>[^\W\d_]{3,})\.?$"),  # Excel's "yy-mmm": "22-Jan"
    re.compile(r"^(?P<month>0[1-9]|1[0-2])/(?P<year>\d{2})$"),  # Excel's "mm/yy": "01/22"
)


def months_in_order(found: pd.DataFrame) -> bool:
    """Whether months read from two-digit-year labels (`found`: their year and month numbers) only rise or
    only fall, and are not one month of many years: else the labels may be days without their year."""
    months = pd.to_numeric(found["year"]).to_numpy() * 12 + pd.to_numeric(found["month"]).to_numpy()
    steps = np.diff(months)
    if not ((steps > 0).all() or (steps < 0).all()):
        return False
    return len(months) < 3 or found["month"].nunique() > 1
