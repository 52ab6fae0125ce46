"""Period labels as the reader matches them: months by name in many languages (`MONTH_NUMBERS`), and the
labels written as `dates.PERIOD_LABELS` reads them (a provisional period's star dropped, Japanese era
years, quarters by their months, three months by their names); and back, for forecasts labelled as the
file labels its periods (`written_as`, `MonthName`)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from forecaster.data.cells import datum_texts

# Months by name, full or cut to three letters (English, German, French, Spanish, Italian, Dutch, Portuguese,
# Turkish, Polish, Czech, Swedish, Danish, Austrian German and Russian), or by the abbreviation after "|".
_MONTH_NAMES = (
    "january february march april may june july august september october november december",
    "januar februar märz april mai juni juli august september oktober november dezember",
    "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "januari februari maart|mrt april mei juni juli augustus september oktober november december",
    "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık",
    "styczeń luty marzec kwiecień maj czerwiec lipiec sierpień wrzesień październik listopad grudzień",
    "leden únor březen duben květen červen|čvn červenec|čvc srpen září říjen listopad prosinec",  # čer: July
    "januari februari mars april maj juni juli augusti september oktober november december",
    "jänner februar marts april maj juni juli august september oktober november december",  # Austria, Denmark
    "januari februari maret april mei juni juli agustus september oktober november desember",  # BPS Indonesia
    "janv févr mars avr mai juin juil août sept oct nov déc",  # French abbreviated, as Excel writes them
    "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь",  # Rosstat
)
MONTH_NUMBERS = {word[:cut]: number for names in _MONTH_NAMES for number, name in enumerate(names.split(), 1)
                 for word in name.split("|") for cut in (3, None)}  # fmt: skip
# A period marked provisional ("2023 oktober*")
PROVISIONAL = re.compile(r"\s*\*+$")
# Three months by their names and the year of the last: "Jan-Mar 2005", the ONS's rolling "Nov-Jan 2010",
# "January to March 2014" (h100 F6)
_MONTH_RANGE = re.compile(r"^(?P<first>[^\W\d_]{3,})\.?(?:\s*[-\u2013]\s*|\s+to\s+)"
                          r"(?P<last>[^\W\d_]{3,})\.?\s+(?P<year>\d{4})$")  # fmt: skip
# A month named in two languages, bilingual offices' "January / janvier 2018", "Januar 2018 / January 2018"
_TWO_NAMES = re.compile(r"^(?P<first>[^\W\d_]{3,})\.?(?:\s+(?P<before>\d{4}))?\s*/\s*"
                        r"(?P<second>[^\W\d_]{3,})\.?\s+(?P<year>\d{4})$")  # fmt: skip
# The year before each era's first (元年, year 1); Taiwan's DGBAS counts the Republic's (民國) years, 112年
# (three digits, no era named) 2023
_QUARTER_MONTHS = re.compile(r"(?P<first>\d{1,2})\s*[-－～~〜]\s*(?P<last>\d{1,2})\s*月期?$")
_ERAS = {"令和": 2018, "平成": 1988, "昭和": 1925, "民國": 1911, None: 1911}
_ERA_YEAR = re.compile(r"^(?:(?P<era>令和|平成|昭和|民國)\s*(?P<year>元|\d{1,3})|(?P<republic>1\d\d))\s*年")
# A year written twice, Western and era, either first: "2019年(令和元年)", "令和元年（2019年）" (h100 F4)
_ONE_YEAR = r"(?:\d{4}|(?:令和|平成|昭和)\s*(?:元|\d{1,2}))\s*年?"
_BOTH_YEARS = re.compile(rf"^(?P<first>{_ONE_YEAR})\s*[(（]\s*(?P<second>{_ONE_YEAR})\s*[)）]")
# KOSIS's "2020년 1월", "2020년 1분기" as the NBS writes them, "2020年1月", "2020年1季度"; and the NBS's
# quarters in Chinese numerals, "2020年第一季度", in digits
_KOREAN = {"년": "年", "월": "月", "분기": "季度"}
CHINESE_QUARTERS = "一二三四"
_CHINESE_QUARTER = re.compile(rf"第\s*(?P<quarter>[{CHINESE_QUARTERS}])(?=\s*(?:季度|四半期)$)")
_CASES = ("lower", "title", "upper")  # how a month's name is written: "jan", "Jan", "JAN"


def label_texts(values: pd.Series) -> pd.Series:
    """The labels without the star that marks a period provisional ("2023 oktober*": CBS, Destatis), with
    Japanese era years as the years they are ("平成31年1月" is 2019's January, "令和元年" 2019), and Korean
    and Chinese-numeral labels as the NBS writes them in digits (`_KOREAN`, `_CHINESE_QUARTER`)."""
    texts = datum_texts(values.astype(str).str.strip())
    if texts.str.contains("년", regex=False).any():
        texts = texts.str.replace("년|월|분기", lambda found: _KOREAN[found[0]], regex=True)
    if texts.str.contains("年", regex=False).any():
        texts = texts.str.replace(_CHINESE_QUARTER, _digit_quarter, regex=True)
        texts = texts.str.replace(_BOTH_YEARS, _year_once, regex=True)
        texts = texts.str.replace(_ERA_YEAR, _western_year, regex=True)
        texts = texts.str.replace(_QUARTER_MONTHS, _quarter_named, regex=True)
    texts = _month_ranges(_one_name(texts))
    return texts.str.replace(PROVISIONAL, "", regex=True) if texts.str.endswith("*").any() else texts


def _month_ranges(texts: pd.Series) -> pd.Series:
    """Three months by their names ("Jan-Mar 2005") as the quarter they are where every label is a
    calendar quarter, else as their last month (the ONS's rolling "Nov-Jan 2010", "Dec-Feb 2010": three
    months stepping monthly, dated by their end); both were refused (h66)."""
    written = _written(texts)
    labels = texts[written]
    if not (len(labels) and _MONTH_RANGE.match(str(labels.iloc[0]))):  # 70,000 timestamps: their first alone
        return texts
    found = labels.str.extract(_MONTH_RANGE)
    if found["year"].isna().any():
        return texts
    first, last = (found[end].str.lower().map(MONTH_NUMBERS) for end in ("first", "last"))
    if first.isna().any() or last.isna().any() or ((last - first) % 12 != 2).any():
        return texts
    if ((first - 1) % 3 == 0).all():
        read = found["year"] + "Q" + ((first + 2) // 3).astype(int).astype(str)
    else:
        read = found["year"] + "M" + last.astype(int).astype(str).str.zfill(2)
    return _placed(texts, written, read)


def _one_name(texts: pd.Series) -> pd.Series:
    """Months named in two languages ("January / janvier 2018") as the first name and the year, where both
    name the same month (of the same year) in every label; else as they are: refused (h100 F5)."""
    written = _written(texts)
    labels = texts[written]
    if not (len(labels) and _TWO_NAMES.match(str(labels.iloc[0]))):  # 70,000 timestamps: their first alone
        return texts
    found = labels.str.extract(_TWO_NAMES)
    first, second = (found[name].str.lower().map(MONTH_NUMBERS) for name in ("first", "second"))
    same = first.notna() & (first == second) & found["before"].fillna(found["year"]).eq(found["year"])
    return _placed(texts, written, found["first"] + " " + found["year"]) if same.all() else texts


def _written(texts: pd.Series) -> np.ndarray:
    """Which of `texts` are written: an empty cell ("nan" as text) is left for the reader to name as empty,
    where it had every label of its column named as no timestamp (h106)."""
    return ~texts.isin(("", "nan")).to_numpy()


def _placed(texts: pd.Series, written: np.ndarray, read: pd.Series) -> pd.Series:
    """`texts` with its `written` labels as `read`, in their order (an index may repeat a value)."""
    placed = texts.copy()
    placed[written] = read.to_numpy()
    return placed


def _digit_quarter(found: re.Match) -> str:
    """A quarter in Chinese numerals ("第一") in digits ("第1")."""
    return f"第{CHINESE_QUARTERS.index(found['quarter']) + 1}"


def _quarter_named(found: re.Match) -> str:
    """A quarter by its months ("1-3月期", e-Stat's) as the quarter it is ("第1四半期")."""
    first, last = int(found["first"]), int(found["last"])
    return f"第{(first + 2) // 3}四半期" if last == first + 2 and first % 3 == 1 else found[0]


def _western_year(found: re.Match) -> str:
    """An era's year ("平成31年", "令和元年") as the Western year it is ("2019年")."""
    year = found["year"] or found["republic"]
    return f"{_ERAS[found['era']] + (1 if year == '元' else int(year))}年"


def _year_once(found: re.Match) -> str:
    """A year written as a Western and an era year that agree, as the Western year ("2019年"); else as is."""
    years = [_ERA_YEAR.sub(_western_year, found[part].replace(" ", "") + "年").rstrip("年") for part in
             ("first", "second")]  # fmt: skip
    return f"{years[0]}年" if years[0] == years[1] else found[0]


def written_as(template: str, text: str) -> str:
    """A label template (`labels`) for labels as `label_texts` reads them ("{year}年 {month}月") written as
    `text` was ("2020년 1월": "{year}년 {month}월"; "2020年第一季度": "{year}年第{cnquarter}季度"), so
    forecasts continue the file's labels."""
    if "년" in text:
        korean = {chinese: korean for korean, chinese in _KOREAN.items()}
        template = re.sub("|".join(korean), lambda found: korean[found[0]], template)
    if _CHINESE_QUARTER.search(text):
        template = template.replace("第{quarter}", "第{cnquarter}")
    if found := _QUARTER_MONTHS.search(text):  # e-Stat's "2023年10-12月期", read as "2023年第4四半期"
        months = found[0].replace(found["first"], "{qfirst}", 1).replace(found["last"], "{qlast}", 1)
        template = template.replace("第{quarter}四半期", months)
    return template


def month_name_specs(word: str) -> list[str]:
    """How `word` writes a month's name, as specs of `MonthName` ("6.0.3.lower": Portuguese, its first
    spelling, three letters, lower case, as IBGE's "jan", "fev"): every language it may be."""
    case = next((case for case in _CASES if getattr(word, case)() == word), None)
    if case is None:
        return []
    return [f"{line}.{spelling}.{cut}.{case}" for line, names in enumerate(_MONTH_NAMES)
            for name in names.split() for spelling, written in enumerate(name.split("|"))
            for cut in (3, 0) if written[: cut or None] == word.lower()]  # fmt: skip


class MonthName:
    """A month written by name, its format spec from `month_name_specs`."""

    def __init__(self, month: int) -> None:
        self.month = month

    def __format__(self, spec: str) -> str:
        line, spelling, cut, case = spec.split(".")
        name = _MONTH_NAMES[int(line)].split()[self.month - 1].split("|")[int(spelling)]
        return getattr(name[: int(cut) or None], case)()
