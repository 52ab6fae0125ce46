"""Forecast dates written the way the history wrote its own: "1988Q1" after "1987Q4", "1971" after a year
column, "2020M02" after "2020M01", "20200201" after "20200131", ONS's "2024 FEB" after "2024 JAN". Official
statistics label periods, not days; a forecast file whose dates look like its history's can be appended to
it. A style is kept only where it writes the history's last labels back exactly; otherwise dates stay
timestamps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pandas as pd

from forecaster.data.dates import PERIOD_LABELS
from forecaster.data.labeltexts import (
    CHINESE_QUARTERS,
    PROVISIONAL,
    MonthName,
    label_texts,
    month_name_specs,
    written_as,
)

_CHECKED = 24  # the history's last labels a style must write back
# Month labels pandas reads itself, as published with month names or without a day, and Excel's "Jan-19";
# days as offices and spreadsheets write them (the Bank of England's "31 Jan 2010", the EIA's "03/15/2024",
# Google Sheets' "6/1/2023", the RBNZ's "31/01/2015"), months as "06/2021": each kept only where it writes
# the dates back.
_STYLES = ("{year}-{month:02d}", "{year}/{month:02d}", "{mon} {year}", "{monthname} {year}",
           "{mon}-{year}", "{year} {mon}", "{year}-{mon}", "{year} {MON}", "{year} {monthname}",
           "{mon}-{yy:02d}", "{day:02d}/{month:02d}/{year}", "{month:02d}/{day:02d}/{year}",
           "{day}/{month}/{year}", "{month}/{day}/{year}", "{day:02d}.{month:02d}.{year}",
           "{day} {mon} {year}", "{day:02d} {mon} {year}", "{day:02d}-{mon}-{year}", "{month:02d}/{year}",
           "{month}/{year}", "{month:02d}.{year}")  # fmt: skip


# Days of a month, written as the file wrote them on one day of each (ISO dates too: read as months there).
_ON_A_DAY = ("{year}-{month:02d}-{day:02d}", *(style for style in _STYLES if "{day" in style))
_DAYS = range(2, 29)  # the days every month holds but its first, on which a date stands for its month


def _on_day(style: str, day: int) -> str:
    """`style` of a date, written on `day` of each month."""
    return style.replace("{day:02d}", f"{day:02d}").replace("{day}", str(day))


_ISO_ON_DAYS = frozenset(_on_day(_ON_A_DAY[0], day) for day in _DAYS)
_ORDINALS = {1: "st", 2: "nd", 3: "rd", 4: "th"}  # "1st quarter 2016" ... "4th quarter 2016"


def _fields(stamp: pd.Timestamp) -> dict[str, object]:
    isoyear, week, _ = stamp.isocalendar()
    half = (stamp.month - 1) // 6 + 1
    return {"year": stamp.year, "quarter": stamp.quarter, "half": half,
            "month": stamp.month, "day": stamp.day, "week": week, "isoyear": isoyear,
            "next": stamp.year + 1, "next2": (stamp.year + 1) % 100, "yy": stamp.year % 100,
            "mon": stamp.strftime("%b"), "MON": stamp.strftime("%b").upper(),
            "monthname": stamp.strftime("%B"), "qth": f"{stamp.quarter}{_ORDINALS[stamp.quarter]}",
            "hth": f"{half}{_ORDINALS[half]}", "name": MonthName(stamp.month),
            "cnquarter": CHINESE_QUARTERS[stamp.quarter - 1], "qfirst": 3 * stamp.quarter - 2,
            "qlast": 3 * stamp.quarter}  # fmt: skip


def _styles(text: str) -> Iterator[str]:
    """Templates (`str.format` over `_fields`) that may have written `text`; months by name in other
    languages or cases than `%b` writes after `_STYLES` ("jan/2018", "январь 2018")."""
    named = []
    if re.fullmatch(r"\d{4}", text):
        yield "{year}"
    if re.fullmatch(r"\d{6}", text):
        yield "{year}{month:02d}"
        yield "{isoyear}{week:02d}"  # "202050": weeks, as statistics offices number them (h49)
    if re.fullmatch(r"\d{8}", text):
        yield "{year}{month:02d}{day:02d}"
    for pattern, part in PERIOD_LABELS:
        match = pattern.match(text)
        if match is None:
            continue
        year = "{yy:02d}" if len(match["year"]) == 2 else "{year}"  # "FY05/06", "Q1-19"
        if part == "span":  # a fiscal year "2019/20", "2019-2020" or "FY2019/20"
            before, between = text[: match.start("year")], text[match.end("year") : match.start("next")]
            yield before + year + between + ("{next2:02d}" if len(match["next"]) == 2 else "{next}")
            continue
        if part == "year" and len(match["year"]) == 2:  # "FY21"
            yield text[: match.start("year")] + year + text[match.end("year") :]
            continue
        names = {"year": "isoyear" if part == "week" else year.strip("{}")}
        fields = [part + ":02d", part]  # zero-padded where the labels cannot tell
        spelled = part == "month" and match["month"].isalpha()  # "jan/2018", "январь 2018": after _STYLES
        if spelled:
            fields = [f"name:{spec}" for spec in month_name_specs(match["month"])]
        for field in fields:
            names[part] = field
            spans = sorted((match.span(group), field) for group, field in names.items())
            template = text
            for (start, end), written in reversed(spans):
                template = template[:start] + "{" + written + "}" + template[end:]
            # 2nd, not 2st: "2nd quarter 2016", "2008 2nd half"
            template = re.sub(r"\{(q|h)(?:uarter|alf)(?::02d)?\}(?:st|nd|rd|th)", r"{\1th}", template)
            if spelled:
                named.append(template)
            else:
                yield template
    yield from _STYLES
    yield from named
    for day in sorted({int(number) for number in re.findall(r"\d{1,2}", text) if int(number) in _DAYS}):
        for style in _ON_A_DAY:  # every date on the day (the 15th), read as months: written on it (h62)
            yield _on_day(style, day)


def _text(value: object) -> str:
    """A label as written: years read as numbers (1990.0, an ONS yearly block's) as the file wrote them, a
    frame's timestamps at midnight as its index's are (`frames.index_as_columns`: '2020-01-15')."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, pd.Timestamp) and value.tz is None and value == value.normalize():
        return value.strftime("%Y-%m-%d")
    return str(value).strip()


def label_style(texts: pd.Series, index: pd.DatetimeIndex) -> str | None:
    """The style of `texts`, the labels `index` was read from, or None where none writes them back."""
    if not isinstance(index, pd.DatetimeIndex) or index.tz is not None or len(index) == 0:
        return None
    # a provisional period's star ("2023 4e kwartaal*", CBS') marks no forecast: the labels without it
    last = [PROVISIONAL.sub("", _text(value)) for value in texts.iloc[-_CHECKED:]]
    stamps = index[-_CHECKED:]
    if len(set(last)) < len(set(stamps)):  # dates beside an hour column: labels of days for hours (h100 F1)
        return None
    read = label_texts(pd.Series(last)).iloc[-1]  # "2020年 1月" of KOSIS's "2020년 1월"
    written = [written_as(style, last[-1]) for style in _styles(read)] if read != last[-1] else []
    pairs = list(zip(stamps, last, strict=True))
    styles = [style for style in dict.fromkeys([*_styles(last[-1]), *written])
              if all(style.format(**_fields(stamp)) == text for stamp, text in pairs)]
    named = {_year_of(style) for style in styles if "{name:" in style}
    if styles and "{name:" in styles[0] and len(named) > 1:
        return None  # "ago 2021", "set 2021": Portuguese or Italian, whose next months differ ("out", "ott")
    return styles[0] if styles else None


def _year_of(style: str) -> tuple[str, ...]:
    """The twelve months of 2000 as `style` writes them: months by name in languages that differ or agree."""
    return tuple(style.format(**_fields(pd.Timestamp(2000, month, 1))) for month in range(1, 13))


def on_a_day(style: str | None) -> bool:
    """Whether `style` writes ISO dates on one day of each period (the 15th, `_ON_A_DAY`): a frame's
    timestamps so read as months are answered on that day too (`frames.in_given_types`), not on the 1st as
    they were, which no merge on the frame's own dates found (h128 O1)."""
    return style in _ISO_ON_DAYS


def write_labels(index: pd.Index, style: str | None) -> pd.Index:
    """`index` as labels of `style` (from `label_style`) where its file wrote such labels ('2014Q1') and it
    holds dates; else as it is."""
    if style is None or not isinstance(index, pd.DatetimeIndex):
        return index
    return pd.Index([style.format(**_fields(stamp)) for stamp in index], name=index.name, dtype=object)
